#if canImport(CCurl)
import CCurl
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a `URLRequest` into easy-handle options, the way URLSession would send it: Courier's
/// redirect step follows redirects (libcurl never does), content codings are undone as URLSession
/// does (by libcurl for a buffered body, by ``CurlStreamDecoding`` for a streamed one), and the
/// request's header fields are sent as given.
struct CurlRequestOptions {
    let configuration: CurlTransport.Configuration
    let cookies: CurlCookieShare?
    /// URLRequest's default `timeoutInterval`; any other value is the request's own idle timeout.
    private static let defaultRequestTimeout: TimeInterval = 60

    /// Applies `request` to the transfer's handle.
    ///
    /// - Parameter idleTimeout: Overrides the idle timeout (streamed calls: the longest gap
    ///   between chunks); otherwise the request's or the configuration's.
    /// - Parameter totalTimeout: Overrides the configuration's total limit (a streamed call's
    ///   `maxDuration`).
    /// - Parameter limitsLowSpeed: Whether libcurl's low-speed limit (under 1 byte per second for
    ///   the idle timeout) ends the transfer; `false` when the caller times the idle gaps itself.
    /// - Parameter decodesContent: Whether libcurl undoes a buffered body's content codings.
    /// - Parameter inflatesItself: Whether a buffered body arrives as sent, to be inflated by
    ///   Courier: the request then accepts only `gzip, deflate` unless it names its own codings.
    /// - Throws: `URLError(.unsupportedURL)` for a URL that is not `http`/`https`,
    ///   `URLError(.secureConnectionFailed)` carrying `PinningFailure.insecureScheme(host:)` for
    ///   plain `http` to a pinned host, `URLError(.unknown)` when libcurl rejects an option,
    ///   `NetworkError.invalidRequest` for a URL or header fields over ``RequestHeadLimits``.
    func apply(
        _ request: URLRequest, to transfer: CurlTransfer, idleTimeout: Duration?, totalTimeout: Duration?,
        limitsLowSpeed: Bool = true, decodesContent: Bool = true, inflatesItself: Bool = false
    ) throws {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw URLError(.unsupportedURL, userInfo: [NSLocalizedDescriptionKey: "only http and https URLs are supported"])
        }
        let handle = transfer.handle
        var failed: CURLoption?
        func set(_ option: CURLoption, _ value: Int) {
            if ccurl_easy_setopt_long(handle, option, value) != CURLE_OK, failed == nil { failed = option }
        }
        func set(_ option: CURLoption, _ value: String) {
            if ccurl_easy_setopt_string(handle, option, value) != CURLE_OK, failed == nil { failed = option }
        }

        set(CURLOPT_URL, url.absoluteString)
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_FOLLOWLOCATION, 0)
        set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        set(CURLOPT_HTTP_VERSION, Self.curlVersion(configuration.httpVersion))
        if configuration.httpVersion == .http2PriorKnowledge, Self.failsReusedPriorKnowledgeConnections {
            // libcurl 7.87 and 7.88 fail every request on a reused h2c connection before sending
            // it ("Error in the HTTP2 framing layer", curl issue 10634, fixed in 8.0.0): each
            // request opens its own connection and closes it after its response.
            set(CURLOPT_FRESH_CONNECT, 1)
            set(CURLOPT_FORBID_REUSE, 1)
        } else if Self.mayMultiplex(scheme: scheme, configuration.httpVersion) {
            // Wait for a connection to the host that is still being set up (TLS and ALPN not
            // done yet) and multiplex onto it if it speaks HTTP/2, instead of opening one more
            // (RFC 9113 §9.1): without it, 20 requests started together opened 6 connections.
            // Plain `http` without prior knowledge is always HTTP/1.1, where waiting would only
            // hold the first requests back until the first response.
            set(CURLOPT_PIPEWAIT, 1)
        }
        let userdata = Unmanaged.passUnretained(transfer).toOpaque()
        _ = ccurl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        _ = ccurl_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, CurlCallbacks.header)
        _ = ccurl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, userdata)
        _ = ccurl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, CurlCallbacks.write)
        _ = ccurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, userdata)
        // libcurl repeats a request whose reused connection died before any answer; only a
        // request that may be repeated is (TransportResendRule), with its whole body.
        transfer.allowsResend = TransportResendRule.allowsResend(request)
        if ccurl_easy_setopt_prereq_callback(handle, CurlCallbacks.prerequest) != CURLE_OK, failed == nil {
            failed = CURLOPT_PREREQFUNCTION
        }
        _ = ccurl_easy_setopt_pointer(handle, CURLOPT_PREREQDATA, userdata)

        // Timeouts: idle (URLSession's request timeout) and total.
        let idle = idleTimeout ?? requestIdleTimeout(request)
        let idleMilliseconds = Self.milliseconds(idle)
        set(CURLOPT_CONNECTTIMEOUT_MS, idleMilliseconds)
        // A pooled handle keeps its options: the limit is set or cleared on every use.
        set(CURLOPT_LOW_SPEED_LIMIT, limitsLowSpeed ? 1 : 0)
        set(CURLOPT_LOW_SPEED_TIME, limitsLowSpeed ? max(1, (idleMilliseconds + 999) / 1000) : 0)
        if let total = totalTimeout ?? configuration.timeoutIntervalForResource {
            set(CURLOPT_TIMEOUT_MS, Self.milliseconds(total))
        }

        // A buffered body: Courier inflates gzip and deflate itself (inflatesItself: libcurl 7.88
        // hands over a coded stream cut before its end as a whole body), and the request accepts
        // only those; when asked to (a request that names other codings of its own, a `br` body
        // sent anyway), libcurl decodes every content coding it knows (gzip, deflate, br, zstd),
        // bounded by the body limit. Without decoding the body arrives as the server sent it,
        // with its Content-Encoding.
        // A streamed body: libcurl hands over the bytes as sent (while paused it would keep all it
        // inflated from one read, up to 64 MiB), and Courier inflates gzip and deflate on demand
        // (CurlStreamDecoding); the request accepts only those unless it names its own codings.
        let streamed: Bool
        if case .streamed = transfer.delivery { streamed = true } else { streamed = false }
        if streamed {
            set(CURLOPT_HTTP_CONTENT_DECODING, 0)
            transfer.decodesStreamedContent = true
        } else if decodesContent {
            set(CURLOPT_ACCEPT_ENCODING, "")
            transfer.libcurlDecodes = true
        }

        if configuration.httpShouldSetCookies, let cookies {
            _ = ccurl_easy_setopt_pointer(handle, CURLOPT_SHARE, cookies.share)
            set(CURLOPT_COOKIEFILE, "")  // enables the cookie engine; the jar is the share's
        }
        if let authorities = configuration.trustedCertificateAuthorities { set(CURLOPT_CAINFO, authorities.path) }
        if let pinning = configuration.pinning, let host = url.host {
            if let pins = pinning.curlPins(for: host) {
                guard scheme == "https" else { throw PinningFailure.insecureScheme(host: host.lowercased()).urlError }
                // The chain the TLS library verified, checked against the pins before the request
                // is sent (CurlCallbacks.prerequest, CurlPinCheck): any certificate of it may
                // carry the key.
                transfer.pins = pins
                // A resumed TLS session exchanges no certificate, so OpenSSL has no verified
                // chain to check: every pinned connection makes a full handshake.
                set(CURLOPT_SSL_SESSIONID_CACHE, 0)
            }
        }
        if scheme == "https", let host = url.host, let identity = configuration.clientIdentities[HostPins.normalise(host)] {
            switch identity.source {
            case .pemFiles(let certificate, let key, let passphrase):
                set(CURLOPT_SSLCERTTYPE, "PEM")
                set(CURLOPT_SSLCERT, certificate.path)
                set(CURLOPT_SSLKEYTYPE, "PEM")
                set(CURLOPT_SSLKEY, key.path)
                if let passphrase { set(CURLOPT_KEYPASSWD, passphrase) }
            case .pkcs12(let data, let passphrase):
                set(CURLOPT_SSLCERTTYPE, "P12")
                var bytes = Array(data)
                let status = bytes.withUnsafeMutableBytes { buffer in
                    // CURL_BLOB_COPY: libcurl keeps its own copy of the archive.
                    var blob = curl_blob(data: buffer.baseAddress, len: buffer.count, flags: UInt32(CURL_BLOB_COPY))
                    return withUnsafeMutablePointer(to: &blob) { ccurl_easy_setopt_pointer(handle, CURLOPT_SSLCERT_BLOB, $0) }
                }
                if status != CURLE_OK, failed == nil { failed = CURLOPT_SSLCERT_BLOB }
                set(CURLOPT_KEYPASSWD, passphrase)
            }
        }

        switch configuration.proxy {
        case .environment: break  // libcurl reads http_proxy, https_proxy, all_proxy and no_proxy itself
        case .none: set(CURLOPT_NOPROXY, "*")
        }
        if let host = url.host, let address = configuration.resolvedAddresses[host.lowercased()] {
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            let entry = address.contains(":") ? "[\(address)]" : address
            transfer.resolveList = curl_slist_append(nil, "\(host):\(port):\(entry)")
            if let list = transfer.resolveList { _ = ccurl_easy_setopt_slist(handle, CURLOPT_RESOLVE, list) }
        }

        let method = (request.httpMethod ?? "GET").uppercased()
        var headers = HTTPHeaders(request)
        if streamed || inflatesItself, !headers.contains("Accept-Encoding") {
            headers.add("Accept-Encoding", CurlStreamDecoding.acceptEncoding)
        }
        // The limits URLSessionTransport keeps too; over them, libcurl fails with CURLE_OUT_OF_MEMORY.
        try RequestHeadLimits.check(url: url, headers: headers)
        if let data = request.httpBody {
            transfer.upload = CurlUpload(data: data)
        } else if let stream = request.httpBodyStream {
            let declared = headers["Content-Length"].flatMap(Int.init)
            transfer.upload = CurlUpload(stream: stream, length: declared)
        }
        if let upload = transfer.upload {
            set(CURLOPT_POST, 1)
            _ = ccurl_easy_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(upload.length ?? -1))
            _ = ccurl_easy_setopt_data_callback(handle, CURLOPT_READFUNCTION, CurlCallbacks.read)
            _ = ccurl_easy_setopt_pointer(handle, CURLOPT_READDATA, userdata)
            _ = ccurl_easy_setopt_seek_callback(handle, CurlCallbacks.seek)
            _ = ccurl_easy_setopt_pointer(handle, CURLOPT_SEEKDATA, userdata)
            if method != "POST" { set(CURLOPT_CUSTOMREQUEST, method) }
            // URLSession adds a form Content-Type only to a POST without one; libcurl would add
            // it to every body it sends with CURLOPT_POST.
            if method != "POST", !headers.contains("Content-Type") { headers.add("Content-Type", "") }
            // No `Expect: 100-continue` round trip unless the request asks for it.
            if !headers.contains("Expect") { headers.add("Expect", "") }
        } else if method == "HEAD" {
            set(CURLOPT_NOBODY, 1)
        } else if method == "POST" || method == "PUT" || method == "PATCH" {
            set(CURLOPT_POST, 1)
            _ = ccurl_easy_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, 0)
            set(CURLOPT_COPYPOSTFIELDS, "")  // copied: libcurl keeps no pointer to it
            if method != "POST" { set(CURLOPT_CUSTOMREQUEST, method) }
            if method != "POST", !headers.contains("Content-Type") { headers.add("Content-Type", "") }
        } else {
            set(CURLOPT_HTTPGET, 1)
            if method != "GET" { set(CURLOPT_CUSTOMREQUEST, method) }
        }

        if headers.contains("Host") { transfer.isReusable = false }
        transfer.headerList = Self.headerList(headers)
        if let list = transfer.headerList { _ = ccurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list) }

        if let failed {
            throw URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "libcurl rejected option \(failed.rawValue)"])
        }
    }

    /// The request's idle timeout: its own `timeoutInterval` unless that is URLRequest's default.
    private func requestIdleTimeout(_ request: URLRequest) -> Duration {
        let own = request.timeoutInterval
        guard own > 0, own.isFinite, own != Self.defaultRequestTimeout else { return configuration.timeoutIntervalForRequest }
        return .milliseconds(Int64(min(own, 365 * 24 * 3600) * 1000))
    }

    /// Header fields as libcurl's list: `Name: value`, `Name;` for an empty value (libcurl's
    /// spelling for "send it empty"), and `Name:` to suppress a field libcurl would add itself.
    static func headerList(_ headers: HTTPHeaders) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for field in headers {
            let line: String
            if field.value.isEmpty {
                let suppress = ["content-type", "expect"].contains(field.name.lowercased())
                line = suppress ? "\(field.name):" : "\(field.name);"
            } else {
                line = "\(field.name): \(field.value)"
            }
            list = curl_slist_append(list, line)
        }
        return list
    }

    /// Whether a request may go out as a stream of a multiplexed HTTP/2 connection: over TLS
    /// unless only HTTP/1.1 is asked for, or with prior knowledge on any scheme.
    static func mayMultiplex(scheme: String, _ version: CurlTransport.HTTPVersion) -> Bool {
        switch version {
        case .automatic: return scheme == "https"
        case .http1: return false
        case .http2PriorKnowledge: return true
        }
    }

    /// Whether the running libcurl is one (7.87.0 up to 8.0.0) that fails requests on a reused
    /// connection of HTTP/2 with prior knowledge.
    static let failsReusedPriorKnowledgeConnections = (0x07_57_00..<0x08_00_00).contains(ccurl_runtime_version())

    static func curlVersion(_ version: CurlTransport.HTTPVersion) -> Int {
        switch version {
        case .automatic: return CURL_HTTP_VERSION_2TLS
        case .http1: return CURL_HTTP_VERSION_1_1
        case .http2PriorKnowledge: return CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
        }
    }

    /// Whole milliseconds, at least 1, at most about 24 days (libcurl takes a C `long`).
    static func milliseconds(_ duration: Duration) -> Int {
        let value = duration / .milliseconds(1)
        guard value.isFinite else { return Int(Int32.max) }
        return Int(min(Double(Int32.max), max(1, value.rounded(.up))))
    }
}
#endif
