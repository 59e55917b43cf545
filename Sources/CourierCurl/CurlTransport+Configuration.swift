#if canImport(CCurl)
import Courier
import Foundation

extension CurlTransport {
    /// Which HTTP version a ``CurlTransport`` asks for (`CURLOPT_HTTP_VERSION`).
    public enum HTTPVersion: Sendable, Hashable {
        /// HTTP/2 over TLS when the server offers it in ALPN, HTTP/1.1 otherwise and for plain
        /// `http` (`CURL_HTTP_VERSION_2TLS`) — what URLSession does. Requests to an `https` host
        /// whose first connection is still being set up wait for it (`CURLOPT_PIPEWAIT`) and
        /// share it when it speaks HTTP/2, rather than each opening one.
        case automatic
        /// HTTP/1.1 only (`CURL_HTTP_VERSION_1_1`).
        case http1
        /// HTTP/2 from the first byte, also on plain `http` ("h2c with prior knowledge", RFC 9113
        /// §3.3; `CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE`). Only for servers known to speak it.
        /// With libcurl 7.87 or 7.88 (Debian 12 ships 7.88.1), which fail a request on a reused
        /// h2c connection, each request opens a connection of its own and closes it after its
        /// response; with libcurl 8 and later, requests share one connection.
        case http2PriorKnowledge
    }

    /// Whether a ``CurlTransport`` sends through the proxy the environment names.
    public enum ProxySettings: Sendable, Hashable {
        /// The proxy of the process environment, as the curl tool and URLSession on Linux use it:
        /// `http_proxy` for `http` URLs, `https_proxy` (or `HTTPS_PROXY`) for `https`, `all_proxy`
        /// for both, except the hosts in `no_proxy` (comma-separated names, domains and addresses;
        /// `*` for all). libcurl reads the variables for every request. The upper-case
        /// `HTTP_PROXY` is ignored (a CGI server sets it from a request's `Proxy` header).
        case environment
        /// No proxy, whatever the environment says (`CURLOPT_NOPROXY` `*`): every request goes
        /// straight to its host.
        case none
    }

    /// How a ``CurlTransport`` sends requests. The defaults match `URLSessionTransport`'s
    /// default configuration.
    public struct Configuration: Sendable {
        /// The longest time without any byte received or sent before a request fails with
        /// `URLError(.timedOut)`, unless the request's own `timeoutInterval` differs from
        /// URLRequest's default (60 s) — URLSession's `timeoutIntervalForRequest`. Mapped to
        /// libcurl's connect timeout and its low-speed limit (fewer than 1 byte per second for
        /// this long; libcurl counts whole seconds). A paused download (a consumer that is not
        /// reading) never counts as idle. Default 60 s.
        public var timeoutIntervalForRequest: Duration = .seconds(60)
        /// The longest a whole request may take (`CURLOPT_TIMEOUT_MS`), or `nil` for no limit —
        /// URLSession's `timeoutIntervalForResource`, which URLSession on Linux ignores. Courier's
        /// client enforces `EndpointPolicy.deadline` itself in any case. Default `nil`.
        public var timeoutIntervalForResource: Duration?
        /// The HTTP version to ask for. Default ``HTTPVersion/automatic``.
        public var httpVersion: HTTPVersion = .automatic
        /// Whether responses' `Set-Cookie` fields are stored and matching cookies sent
        /// (RFC 6265), in a cookie store private to this transport. Default `true`.
        public var httpShouldSetCookies = true
        /// The most connections open to one host at a time (`CURLMOPT_MAX_HOST_CONNECTIONS`);
        /// further requests wait for one. Default 6, URLSession's `httpMaximumConnectionsPerHost`
        /// on macOS. Finished connections stay open for reuse, up to four times this many per
        /// transport over all hosts, at least 32 (`CURLMOPT_MAXCONNECTS`; 256 with no limit).
        /// Long-lived streams (`StreamingOptions.isLongLived`) are outside this limit, in a pool
        /// of their own.
        public var httpMaximumConnectionsPerHost = 6
        /// A PEM file of certificate authorities to trust instead of the system store
        /// (`CURLOPT_CAINFO`), for test servers and enterprise CAs; `nil` trusts the system store.
        public var trustedCertificateAuthorities: URL?
        /// Public-key pins checked on every TLS connection to a pinned host, after normal
        /// certificate verification; `nil` pins nothing. As on Apple platforms, a pinned key
        /// anywhere in the chain the TLS library verified passes (RFC 7469 §2.6): the leaf, an
        /// intermediate or the trust anchor. A certificate the server merely sends along, off the
        /// verified path, never does. libcurl's own `CURLOPT_PINNEDPUBLICKEY` checks only the
        /// leaf, so Courier reads OpenSSL's verified chain of the connection before each request
        /// is sent, on new and reused connections alike; where libcurl does not use OpenSSL
        /// (1.1.0 or later) there is no such chain and pinned requests fail. A mismatch fails the
        /// request before it is sent with a `URLError`
        /// (`.serverCertificateUntrusted`) whose `URLError.pinningFailure` is
        /// `PinningFailure.pinMismatch(host:presented:)`; a plain `http` request to a pinned
        /// host is refused with `PinningFailure.insecureScheme(host:)`.
        public var pinning: PinningPolicy?
        /// The client certificate presented to each host that asks for one (mutual TLS), keyed by
        /// lower-case host name: `CURLOPT_SSLCERT`/`CURLOPT_SSLKEY` for PEM files,
        /// `CURLOPT_SSLCERT_BLOB` with type `P12` for a PKCS#12 archive, `CURLOPT_KEYPASSWD` for
        /// the passphrase. A certificate or key libcurl cannot read (a wrong passphrase, a missing
        /// file) fails the request with `URLError(.clientCertificateRejected)`. A server that
        /// requires a certificate from a host without one ends the TLS connection: libcurl reports
        /// no more than a lost connection (`.networkConnectionLost`; TLS 1.3 refuses after the
        /// handshake) or `.secureConnectionFailed`. Default none.
        public var clientIdentities: [String: ClientIdentity] = [:]
        /// Whether requests go through the proxy the environment names (`http_proxy`,
        /// `https_proxy`, `all_proxy`, `no_proxy`). Default ``ProxySettings/environment``, what
        /// URLSession does on Linux; ``ProxySettings/none`` ignores the variables.
        public var proxy: ProxySettings = .environment
        /// Addresses to use for host names instead of asking the resolver (`CURLOPT_RESOLVE`, the
        /// curl tool's `--resolve`), keyed by lower-case host name, for every port: for example
        /// `["api.test": "127.0.0.1"]` to reach a local server under a name that is not
        /// loopback-named. The request still names the host (`Host`, TLS server name and
        /// certificate check, cookies). An IPv6 address is written without brackets. Default none.
        public var resolvedAddresses: [String: String] = [:]

        /// The default configuration.
        public init() {}
    }
}
#endif
