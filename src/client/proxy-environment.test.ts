import { describe, expect, it } from 'vitest';
import { proxyFromEnvironment, readProxyEnvironment } from './proxy-environment.ts';

const PROXY = 'http://proxy.corp:3128/';

/** The proxy chosen for `server` with these variables set, or 'direct'. */
function chosen(server: string, env: Record<string, string>): string {
  const proxy = proxyFromEnvironment(new URL(server), readProxyEnvironment(env));
  return proxy ? `${proxy.variable} ${proxy.url}` : 'direct';
}

describe('the proxy the environment names for a server (Go net/http rules)', () => {
  it.each([
    // Which variable: by the server's scheme, upper case first.
    ['https://api.corp:6443', { HTTPS_PROXY: PROXY }, `HTTPS_PROXY ${PROXY}`],
    ['https://api.corp:6443', { https_proxy: PROXY }, `https_proxy ${PROXY}`],
    ['https://api.corp:6443', { HTTPS_PROXY: PROXY, https_proxy: 'http://other:1/' }, `HTTPS_PROXY ${PROXY}`],
    ['https://api.corp:6443', { HTTPS_PROXY: '', https_proxy: PROXY }, `https_proxy ${PROXY}`],
    ['https://api.corp:6443', { HTTP_PROXY: PROXY }, 'direct'],
    ['http://api.corp:8080', { HTTP_PROXY: PROXY }, `HTTP_PROXY ${PROXY}`],
    ['http://api.corp:8080', { HTTPS_PROXY: PROXY }, 'direct'],
    // The value: no scheme is http; a socks5 or https one as written.
    ['https://api.corp', { HTTPS_PROXY: 'proxy.corp:3128' }, `HTTPS_PROXY ${PROXY}`],
    ['https://api.corp', { HTTPS_PROXY: '10.1.1.1:3128' }, 'HTTPS_PROXY http://10.1.1.1:3128/'],
    ['https://api.corp', { HTTPS_PROXY: 'socks5://u:p@gw:1080' }, 'HTTPS_PROXY socks5://u:p@gw:1080'],
    ['https://api.corp', { HTTPS_PROXY: 'https://proxy.corp' }, 'HTTPS_PROXY https://proxy.corp/'],
    // Never for localhost or a loopback address, whatever NO_PROXY says.
    ['https://localhost:6443', { HTTPS_PROXY: PROXY }, 'direct'],
    ['https://127.0.0.1:6443', { HTTPS_PROXY: PROXY }, 'direct'],
    ['https://127.9.8.7:6443', { HTTPS_PROXY: PROXY }, 'direct'],
    ['https://[::1]:6443', { HTTPS_PROXY: PROXY }, 'direct'],
    ['https://[::ffff:127.0.0.1]:6443', { HTTPS_PROXY: PROXY }, 'direct'],
    ['https://localhost.corp:6443', { HTTPS_PROXY: PROXY }, `HTTPS_PROXY ${PROXY}`],
    // NO_PROXY: everything.
    ['https://api.corp', { HTTPS_PROXY: PROXY, NO_PROXY: '*' }, 'direct'],
    ['https://api.corp', { HTTPS_PROXY: PROXY, no_proxy: 'a.b, *' }, 'direct'],
    // A domain: itself and its subdomains; with a leading dot or `*.`, its subdomains only; case and spaces ignored.
    ['https://api.corp', { HTTPS_PROXY: PROXY, NO_PROXY: 'corp' }, 'direct'],
    ['https://corp', { HTTPS_PROXY: PROXY, NO_PROXY: 'corp' }, 'direct'],
    ['https://API.Corp', { HTTPS_PROXY: PROXY, NO_PROXY: ' other.org , CORP ' }, 'direct'],
    ['https://corp', { HTTPS_PROXY: PROXY, NO_PROXY: '.corp' }, `HTTPS_PROXY ${PROXY}`],
    ['https://api.corp', { HTTPS_PROXY: PROXY, NO_PROXY: '.corp' }, 'direct'],
    ['https://corp', { HTTPS_PROXY: PROXY, NO_PROXY: '*.corp' }, `HTTPS_PROXY ${PROXY}`],
    ['https://api.corp', { HTTPS_PROXY: PROXY, NO_PROXY: '*.corp' }, 'direct'],
    ['https://apicorp', { HTTPS_PROXY: PROXY, NO_PROXY: 'corp' }, `HTTPS_PROXY ${PROXY}`],
    // With a port: only that port, the scheme's default when the server names none.
    ['https://api.corp:6443', { HTTPS_PROXY: PROXY, NO_PROXY: 'api.corp:6443' }, 'direct'],
    ['https://api.corp:8443', { HTTPS_PROXY: PROXY, NO_PROXY: 'api.corp:6443' }, `HTTPS_PROXY ${PROXY}`],
    ['https://api.corp', { HTTPS_PROXY: PROXY, NO_PROXY: 'api.corp:443' }, 'direct'],
    // Addresses and CIDR blocks; a domain never matches an address.
    ['https://10.2.3.4:6443', { HTTPS_PROXY: PROXY, NO_PROXY: '10.2.3.4' }, 'direct'],
    ['https://10.2.3.4:6443', { HTTPS_PROXY: PROXY, NO_PROXY: '10.2.3.4:6443' }, 'direct'],
    ['https://10.2.3.4:6443', { HTTPS_PROXY: PROXY, NO_PROXY: '10.2.3.4:443' }, `HTTPS_PROXY ${PROXY}`],
    ['https://10.2.3.4:6443', { HTTPS_PROXY: PROXY, NO_PROXY: '10.0.0.0/8' }, 'direct'],
    ['https://11.2.3.4:6443', { HTTPS_PROXY: PROXY, NO_PROXY: '10.0.0.0/8' }, `HTTPS_PROXY ${PROXY}`],
    ['https://[fd00::5]:6443', { HTTPS_PROXY: PROXY, NO_PROXY: 'fd00::/8' }, 'direct'],
    ['https://[fd00::5]:6443', { HTTPS_PROXY: PROXY, NO_PROXY: 'fd00::5' }, 'direct'],
    ['https://[fd00::5]:6443', { HTTPS_PROXY: PROXY, NO_PROXY: '[fd00::5]:6443' }, 'direct'],
    ['https://[fd00::5]:6443', { HTTPS_PROXY: PROXY, NO_PROXY: '[fd00::5]:443' }, `HTTPS_PROXY ${PROXY}`],
    ['https://10.2.3.4', { HTTPS_PROXY: PROXY, NO_PROXY: '2.3.4' }, `HTTPS_PROXY ${PROXY}`],
    ['https://api.corp', { HTTPS_PROXY: PROXY, NO_PROXY: '10.0.0.0/8,10.2.3.4' }, `HTTPS_PROXY ${PROXY}`],
    ['https://10.2.3.4', { HTTPS_PROXY: PROXY, NO_PROXY: '10.0.0.0/99' }, `HTTPS_PROXY ${PROXY}`],
  ])('%s with %j: %s', (server, env, expected) => {
    expect(chosen(server, env)).toBe(expected);
  });

  it('says which variable holds a value that is no URL', () => {
    expect(() => chosen('https://api.corp', { https_proxy: 'http://[' })).toThrow(
      'https_proxy "http://[" is not a proxy URL',
    );
  });

  it('refuses HTTP_PROXY for an http server in a CGI environment, where it may be a request header', () => {
    expect(() => chosen('http://api.corp', { HTTP_PROXY: PROXY, REQUEST_METHOD: 'GET' })).toThrow(
      'refusing to use HTTP_PROXY in a CGI environment (REQUEST_METHOD is set)',
    );
    expect(chosen('https://api.corp', { HTTPS_PROXY: PROXY, REQUEST_METHOD: 'GET' })).toBe(`HTTPS_PROXY ${PROXY}`);
  });
});
