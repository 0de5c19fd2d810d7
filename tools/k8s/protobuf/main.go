// Command protobuf writes what our client needs to read Kubernetes protobuf as the JSON it stands for, taken from
// the Go types of the pinned release by reflection (their `protobuf` and `json` struct tags):
//
//	go run ./protobuf messages   the message tables of the kinds in roots (src/client/protobuf/messages.json)
//	go run ./protobuf vectors    watch frames of randomly filled objects, each with the JSON event kube-apiserver
//	                             would send instead (the decoder's test runs it)
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"
)

// The kinds read as protobuf, by apiVersion/kind: pods are the bulk of a cluster's objects; a watch's ERROR event
// holds a Status.
var roots = map[string]any{
	"v1/Pod":    corev1.Pod{},
	"v1/Status": metav1.Status{},
}

// Types whose JSON is not their fields': the decoder knows each by this word. (A root holding another such type,
// or a float or bytes field, stops this command: the decoder learns it first.)
var special = map[reflect.Type]string{
	reflect.TypeOf(metav1.Time{}):        "time",
	reflect.TypeOf(intstr.IntOrString{}): "intOrString",
	reflect.TypeOf(resource.Quantity{}):  "quantity",
	reflect.TypeOf(metav1.FieldsV1{}):    "fieldsV1",
}

// One field of a message: its number, its JSON name (empty when its fields are the parent's), and its type.
type Field struct {
	Number int    `json:"number"`
	JSON   string `json:"json,omitempty"`
	// The value type: string, int, bool, a special word, or the name of a message of the tables.
	Type string `json:"type"`
	// list, map (string keys) or absent.
	Shape string `json:"shape,omitempty"`
	// The Go field is a pointer: set means present, its zero value included.
	Pointer bool `json:"pointer,omitempty"`
	// JSON leaves the field out when empty (omitempty: a scalar's zero value, an empty list or map; never a struct).
	OmitEmpty bool `json:"omitEmpty,omitempty"`
	// JSON leaves the field out when zero (omitzero): here only a zero time, which JSON otherwise writes as null.
	OmitZero bool `json:"omitZero,omitempty"`
}

type Tables struct {
	Release  string             `json:"release"`
	Kinds    map[string]string  `json:"kinds"`
	Messages map[string][]Field `json:"messages"`
}

func messageName(t reflect.Type) string {
	path := strings.Split(t.PkgPath(), "/")
	return path[len(path)-2] + "/" + path[len(path)-1] + "." + t.Name()
}

func (tables *Tables) valueType(t reflect.Type) string {
	if word, ok := special[t]; ok {
		return word
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int32, reflect.Int64:
		return "int"
	case reflect.Struct:
		return tables.walk(t)
	}
	panic(fmt.Sprintf("no protobuf reading for %s", t))
}

// walk adds the message of struct type t and those it holds; it returns the message's name. A message that holds
// itself stops it: the decoder's nesting is bounded by the tables.
func (tables *Tables) walk(t reflect.Type) string {
	name := messageName(t)
	if fields, seen := tables.Messages[name]; seen {
		if fields == nil {
			panic(fmt.Sprintf("%s holds itself", name))
		}
		return name
	}
	tables.Messages[name] = nil
	var fields []Field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := strings.Split(sf.Tag.Get("protobuf"), ",")
		if len(tag) < 2 {
			continue // TypeMeta: the envelope carries it
		}
		number, err := strconv.Atoi(tag[1])
		if err != nil {
			panic(fmt.Sprintf("%s.%s: protobuf tag %q", name, sf.Name, sf.Tag.Get("protobuf")))
		}
		jsonTag := strings.Split(sf.Tag.Get("json"), ",")
		if jsonTag[0] == "-" || (jsonTag[0] == "" && !sf.Anonymous) {
			panic(fmt.Sprintf("%s.%s: no JSON name, and not embedded", name, sf.Name))
		}
		f := Field{Number: number, JSON: jsonTag[0]}
		for _, option := range jsonTag[1:] {
			f.OmitEmpty = f.OmitEmpty || option == "omitempty"
			f.OmitZero = f.OmitZero || option == "omitzero"
		}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			f.Pointer, ft = true, ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Map:
			if ft.Key().Kind() != reflect.String {
				panic(fmt.Sprintf("%s.%s: map key %s", name, sf.Name, ft.Key()))
			}
			f.Shape, f.Type = "map", tables.valueType(ft.Elem())
		case ft.Kind() == reflect.Slice:
			f.Shape, f.Type = "list", tables.valueType(ft.Elem())
		default:
			f.Type = tables.valueType(ft)
		}
		if f.OmitZero && (f.Type != "time" || f.Pointer || f.Shape != "") {
			panic(fmt.Sprintf("%s.%s: omitzero on a field other than a time by value", name, sf.Name))
		}
		fields = append(fields, f)
	}
	tables.Messages[name] = append([]Field{}, fields...)
	return name
}

func messages() any {
	tables := &Tables{Release: release(), Kinds: map[string]string{}, Messages: map[string][]Field{}}
	for kind, root := range roots {
		tables.Kinds[kind] = tables.walk(reflect.TypeOf(root))
	}
	return tables
}

// release names the k8s.io/api module the tables come from.
func release() string {
	info, _ := debug.ReadBuildInfo()
	for _, dep := range info.Deps {
		if dep.Path == "k8s.io/api" {
			return dep.Version
		}
	}
	panic("k8s.io/api is not among the build's modules")
}

type Vector struct {
	Kind string `json:"kind"`
	// A watch frame: the event's length (4 bytes, big-endian), then the WatchEvent, its object in the envelope.
	Frame string `json:"frame"`
	// The same event as a JSON watch line.
	JSON string `json:"json"`
}

// A filler whose objects both encodings carry alike: times of whole seconds (JSON's), valid quantities, field sets
// of JSON.
func filler(seed int64) *randfill.Filler {
	return randfill.New().RandSource(rand.NewSource(seed)).NilChance(0.2).NumElements(1, 2).Funcs(
		func(t *metav1.Time, c randfill.Continue) {
			if c.Intn(8) > 0 {
				*t = metav1.Unix(c.Int63n(5e9), 0)
			}
		},
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1e9), resource.DecimalSI)
		},
		func(f *metav1.FieldsV1, c randfill.Continue) {
			f.Raw = []byte(fmt.Sprintf(`{"f:metadata":{"f:labels":{"f:l%d":{}}}}`, c.Intn(100)))
		},
	)
}

func vectors() any {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(scheme, corev1.SchemeGroupVersion)
	serializer := protobuf.NewSerializer(scheme, scheme)
	var out []Vector
	add := func(eventType string, obj runtime.Object) {
		var envelope bytes.Buffer
		if err := serializer.Encode(obj, &envelope); err != nil {
			panic(err)
		}
		event := metav1.WatchEvent{Type: eventType, Object: runtime.RawExtension{Raw: envelope.Bytes()}}
		message, err := event.Marshal()
		if err != nil {
			panic(err)
		}
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(message)))
		objectJSON, err := json.Marshal(obj)
		if err != nil {
			panic(err)
		}
		line, err := json.Marshal(metav1.WatchEvent{Type: eventType, Object: runtime.RawExtension{Raw: objectJSON}})
		if err != nil {
			panic(err)
		}
		kind := obj.GetObjectKind().GroupVersionKind().Kind
		out = append(out, Vector{Kind: kind, Frame: base64.StdEncoding.EncodeToString(append(frame, message...)), JSON: string(line)})
	}
	for seed := int64(1); seed <= 12; seed++ {
		pod := &corev1.Pod{}
		filler(seed).Fill(pod)
		pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		add([]string{"ADDED", "MODIFIED", "DELETED"}[seed%3], pod)
	}
	for seed := int64(1); seed <= 3; seed++ {
		status := &metav1.Status{}
		filler(seed).Fill(status)
		status.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
		add("ERROR", status)
	}
	return out
}

func main() {
	var result any
	switch strings.Join(os.Args[1:], " ") {
	case "messages":
		result = messages()
	case "vectors":
		result = vectors()
	default:
		fmt.Fprintln(os.Stderr, "usage: go run ./protobuf messages|vectors")
		os.Exit(2)
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", " ")
	if err := encoder.Encode(result); err != nil {
		panic(err)
	}
}
