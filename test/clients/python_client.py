"""The official Python client (Debian's python3-kubernetes) driving the embedded control plane.

Run by test/clients/python-client.test.ts as
    /usr/bin/python3 python_client.py KUBECONFIG FLAVOR NAMESPACE SIGNER WORKDIR
Each check prints one JSON line: {"check": NAME, ...what it saw} or {"check": NAME, "error": ...}.
The test asserts on those facts; this script only reports them. Every wait has a deadline.

In the orch flavor the certificates group is certificates.orch.io, which the typed client cannot address
(its paths are fixed to certificates.k8s.io): there the same models go through api_client.call_api on the
renamed path. Core, apps and policy have the same names in both flavors.
"""

import base64
import json
import subprocess
import sys
import threading
import time
import traceback

import yaml

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

KUBECONFIG, FLAVOR, NS, SIGNER, WORKDIR = sys.argv[1:6]
GROUP_SUFFIX = "orch.io" if FLAVOR == "orch" else "k8s.io"

config.load_kube_config(config_file=KUBECONFIG)
api_client = client.ApiClient()
core = client.CoreV1Api(api_client)
apps = client.AppsV1Api(api_client)
policy = client.PolicyV1Api(api_client)
certs = client.CertificatesV1Api(api_client)


def emit(name, **facts):
    print(json.dumps({"check": name, **facts}, default=str), flush=True)


def run(name, fn):
    try:
        emit(name, **fn())
    except ApiException as e:
        emit(name, error=f"ApiException {e.status}: {e.body}")
    except Exception as e:  # noqa: BLE001 - every failure is reported as a fact for the test
        emit(name, error=f"{type(e).__name__}: {e}", trace=traceback.format_exc(limit=3))


def wait_for(what, fn, seconds=20.0):
    """Polls fn until it returns something truthy, at most `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError(f"{what}: not within {seconds} s")


def call(method, path, body=None, content_type=None, response_type="object", query=None):
    """A request through the generic api_client.call_api, as the typed methods make them."""
    headers = {"Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    data, status, _ = api_client.call_api(
        path,
        method,
        header_params=headers,
        query_params=query or [],
        body=body,
        response_type=response_type,
        auth_settings=["BearerToken"],
        _return_http_data_only=False,
    )
    return data, status


def refusal(fn):
    """The status and message of the ApiException a call raises (code None: it raised none)."""
    try:
        fn()
        return {"code": None, "message": ""}
    except ApiException as e:
        return {"code": e.status, "message": json.loads(e.body).get("message", "")}


def namespaces():
    created = core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    names = [n.metadata.name for n in core.list_namespace().items]
    read = core.read_namespace(NS)
    return {
        "created": created.metadata.name,
        "listed": names,
        "phase": read.status.phase,
        "labels": read.metadata.labels,
    }


def configmaps():
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm", labels={"app": "py"}), data={"a": "1"})
    created = core.create_namespaced_config_map(NS, cm)
    created.data["b"] = "2"
    replaced = core.replace_namespaced_config_map("cm", NS, created)
    # A dict body goes as a strategic merge patch, a list as a JSON patch (rest.py chooses by the body).
    strategic = core.patch_namespaced_config_map("cm", NS, {"data": {"c": "3"}})
    json_patch = core.patch_namespaced_config_map("cm", NS, [{"op": "replace", "path": "/data/a", "value": "10"}])
    # The typed method never sends a merge patch: that goes through call_api.
    merged, merge_status = call(
        "PATCH",
        f"/api/v1/namespaces/{NS}/configmaps/cm",
        body={"data": {"b": None, "d": "4"}},
        content_type="application/merge-patch+json",
    )
    listed = core.list_namespaced_config_map(NS, label_selector="app=py")
    core.delete_namespaced_config_map("cm", NS)
    gone = refusal(lambda: core.read_namespaced_config_map("cm", NS))
    return {
        "created": created.metadata.resource_version is not None,
        "replaced": replaced.data,
        "strategic": strategic.data,
        "jsonPatch": json_patch.data,
        "merge": {"status": merge_status, "data": merged["data"]},
        "listed": [i.metadata.name for i in listed.items],
        "afterDelete": gone["code"],
    }


def pod_body(name, labels):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="app:1")]),
    )


def pod_watch():
    since = core.list_namespaced_pod(NS).metadata.resource_version
    core.create_namespaced_pod(NS, pod_body("watched", {"app": "watched"}))

    def change():
        core.patch_namespaced_pod("watched", NS, {"metadata": {"labels": {"step": "two"}}})
        core.delete_namespaced_pod("watched", NS, grace_period_seconds=0)

    # The ADDED event replays the create from `since`; the changes are made once it arrived, so the watch
    # receives them live.
    changer = threading.Thread(target=change)
    seen = []
    w = watch.Watch()
    started = time.monotonic()
    for event in w.stream(
        core.list_namespaced_pod,
        NS,
        resource_version=since,
        timeout_seconds=10,
        allow_watch_bookmarks=True,
    ):
        obj = event["object"]
        if event["type"] != "BOOKMARK":
            seen.append([event["type"], obj.metadata.name, (obj.metadata.labels or {}).get("step")])
        if event["type"] == "ADDED" and changer.ident is None:
            changer.start()
        if event["type"] == "DELETED":
            w.stop()
    changer.join(timeout=10)
    return {"events": seen, "seconds": round(time.monotonic() - started, 1)}


def csr_pem():
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "py-clients"),
            x509.NameAttribute(NameOID.COMMON_NAME, "python-client-user"),
        ]
    )
    req = x509.CertificateSigningRequestBuilder().subject_name(name).sign(key, hashes.SHA256())
    return req.public_bytes(serialization.Encoding.PEM)


def csr():
    name = f"py-{NS}"
    body = client.V1CertificateSigningRequest(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1CertificateSigningRequestSpec(
            request=base64.b64encode(csr_pem()).decode(),
            signer_name=SIGNER,
            usages=["digital signature", "client auth"],
            expiration_seconds=3600,
        ),
    )
    model = "V1CertificateSigningRequest"
    base = f"/apis/certificates.{GROUP_SUFFIX}/v1/certificatesigningrequests"
    if FLAVOR == "kubernetes":
        create = certs.create_certificate_signing_request
        read = certs.read_certificate_signing_request
        approve = certs.replace_certificate_signing_request_approval
    else:
        def create(b):
            return call("POST", base, body=b, response_type=model)[0]

        def read(n):
            return call("GET", f"{base}/{n}", response_type=model)[0]

        def approve(n, b):
            return call("PUT", f"{base}/{n}/approval", body=b, response_type=model)[0]

    create(body)
    current = read(name)
    current.status.conditions = [
        client.V1CertificateSigningRequestCondition(
            type="Approved", status="True", reason="PythonClient", message="approved by the python client"
        )
    ]
    approved = approve(name, current)
    issued = wait_for("status.certificate", lambda: read(name).status.certificate)
    pem = base64.b64decode(issued).decode()
    with open(f"{WORKDIR}/py-leaf.pem", "w") as f:
        f.write(pem)
    ca = client.Configuration.get_default_copy().ssl_ca_cert
    verify = subprocess.run(
        ["openssl", "verify", "-purpose", "sslclient", "-CAfile", ca, f"{WORKDIR}/py-leaf.pem"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    return {
        "conditions": [[c.type, c.status, c.reason] for c in approved.status.conditions],
        "pemHeader": pem.splitlines()[0],
        "verify": (verify.stdout + verify.stderr).strip(),
    }


def eviction():
    labels = {"app": "budgeted"}
    for n in ("b-0", "b-1"):
        core.create_namespaced_pod(NS, pod_body(n, labels))
        core.patch_namespaced_pod_status(
            n, NS, {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
        )
    policy.create_namespaced_pod_disruption_budget(
        NS,
        client.V1PodDisruptionBudget(
            metadata=client.V1ObjectMeta(name="budget"),
            spec=client.V1PodDisruptionBudgetSpec(
                min_available=1, selector=client.V1LabelSelector(match_labels=labels)
            ),
        ),
    )
    wait_for(
        "the budget allowing one disruption",
        lambda: (policy.read_namespaced_pod_disruption_budget("budget", NS).status.disruptions_allowed or 0) == 1,
    )

    def evict(n):
        body = client.V1Eviction(metadata=client.V1ObjectMeta(name=n, namespace=NS))
        return core.create_namespaced_pod_eviction_with_http_info(n, NS, body)[1]

    first = evict("b-0")
    second = refusal(lambda: evict("b-1"))
    return {"first": first, "second": second["code"], "message": second["message"]}


def server_side_apply():
    # 22.6's rest.py sends only JSON-typed bodies from objects (DynamicClient.server_side_apply fails there
    # with "Cannot prepare a request message"): an apply body goes as a YAML string through call_api.
    def apply(manager, value, force=None):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"k": value}}
        query = [("fieldManager", manager)] + ([("force", force)] if force is not None else [])
        obj, _ = call(
            "PATCH",
            f"/api/v1/namespaces/{NS}/configmaps/applied",
            body=yaml.safe_dump(body),
            content_type="application/apply-patch+yaml",
            response_type="V1ConfigMap",
            query=query,
        )
        return obj

    first = apply("py-a", "1")
    conflict = refusal(lambda: apply("py-b", "2"))
    forced = apply("py-b", "2", force=True)
    return {
        "first": first.data["k"],
        "conflict": conflict,
        "forced": forced.data["k"],
        "managers": sorted(m.manager for m in forced.metadata.managed_fields),
    }


def dynamic_discovery():
    # Discovery of every group, the renamed ones included; a cache file of this run's own.
    dyn = DynamicClient(api_client, cache_file=f"{WORKDIR}/py-discovery.json")
    csrs = dyn.resources.get(api_version=f"certificates.{GROUP_SUFFIX}/v1", kind="CertificateSigningRequest")
    sets = dyn.resources.get(api_version="apps/v1", kind="StatefulSet")
    return {
        "csr": [csrs.name, csrs.namespaced, sorted(csrs.subresources)],
        "statefulset": [sets.name, sets.namespaced, sorted(sets.subresources)],
        "listed": sorted(i.metadata.name for i in dyn.get(csrs).items),
    }


def version():
    v = client.VersionApi(api_client).get_code()
    return {"major": v.major, "minor": v.minor, "gitVersion": v.git_version, "platform": v.platform}


def statefulset_events():
    labels = {"app": "web"}
    apps.create_namespaced_stateful_set(
        NS,
        client.V1StatefulSet(
            metadata=client.V1ObjectMeta(name="web"),
            spec=client.V1StatefulSetSpec(
                service_name="web",
                replicas=1,
                selector=client.V1LabelSelector(match_labels=labels),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels=labels),
                    spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="web:1")]),
                ),
            ),
        ),
    )

    def created():
        events = core.list_namespaced_event(NS).items
        return [e for e in events if e.involved_object.name == "web" and e.reason == "SuccessfulCreate"]

    event = wait_for("a SuccessfulCreate event of the StatefulSet", created)[0]
    return {
        "kind": event.involved_object.kind,
        "reason": event.reason,
        "type": event.type,
        "message": event.message,
        "source": event.source.component if event.source else None,
        "reportingComponent": event.reporting_component,
    }


for check_name, check in [
    ("namespaces", namespaces),
    ("configmaps", configmaps),
    ("pod-watch", pod_watch),
    ("csr", csr),
    ("eviction", eviction),
    ("server-side-apply", server_side_apply),
    ("dynamic-discovery", dynamic_discovery),
    ("version", version),
    ("statefulset-events", statefulset_events),
]:
    run(check_name, check)
