import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The largest request head Courier's transports send: a URL of at most ``maxURLBytes`` and header
/// fields of at most ``maxHeaderSectionBytes`` together. Both `URLSessionTransport` and
/// `CurlTransport` check a request with ``check(_:)`` before anything is sent, so a request over
/// either limit fails the same way on both: ``NetworkError/invalidRequest(_:)`` naming the URL's
/// size or the largest field (never its value, which may be a secret).
///
/// RFC 9110 leaves the limits to servers (§4.1 asks for request targets of at least 8,000 octets,
/// §5.4 lets a server refuse a header section it finds too large with 431, RFC 6585 §5). The front
/// ends most APIs sit behind answer 400, 414 or 431 long before these limits (nginx: 8 KiB per
/// line, 32 KiB in all by default; Apache and gunicorn: 8,190 bytes per field; Node.js: 16 KiB in
/// all; AWS ALB: 16 KiB per line, 64 KiB in all); a few servers take more (Go's net/http: 1 MB).
/// A head above them is almost always a programming error (a body sent as a header, a file in a
/// query), and one fixed limit keeps the transports alike: without it, libcurl — under both
/// transports on Linux — refused a head over 1 MiB with `CURLE_OUT_OF_MEMORY`, which reached the
/// caller as a `transport` error "Out of memory".
package enum RequestHeadLimits {
    /// The most bytes of header fields in one request: 64 KiB, counted as HTTP/1.1 writes them
    /// (`name: value` and CR LF per field). Fields the transport adds itself (cookies from its
    /// store, `Host`, `Accept-Encoding`) are not counted.
    package static let maxHeaderSectionBytes = 64 * 1024

    /// The most bytes of a request's URL (`absoluteString`, UTF-8): 64 KiB.
    package static let maxURLBytes = 64 * 1024

    /// Refuses a request whose URL or header fields exceed the limits.
    ///
    /// - Throws: ``NetworkError/invalidRequest(_:)`` naming the URL's size, or the header section's
    ///   size and its largest field's name and size.
    package static func check(_ request: URLRequest) throws {
        try check(url: request.url, fields: request.allHTTPHeaderFields?.lazy.map { ($0.key, $0.value) } ?? [])
    }

    /// ``check(_:)`` for a request whose fields were read already.
    ///
    /// - Throws: ``NetworkError/invalidRequest(_:)`` as ``check(_:)``.
    package static func check(url: URL?, headers: HTTPHeaders) throws {
        try check(url: url, fields: headers.lazy.map { ($0.name, $0.value) })
    }

    private static func check(url: URL?, fields: some Sequence<(String, String)>) throws {
        if let url {
            let length = url.absoluteString.utf8.count
            if length > maxURLBytes {
                throw NetworkError.invalidRequest(
                    "the URL of \(url.host.map { "the request to \($0)" } ?? "the request") is \(length) bytes, "
                        + "more than the \(maxURLBytes) Courier sends: send the data in the body")
            }
        }
        var total = 0
        var largest: (name: String, bytes: Int)?
        for (name, value) in fields {
            let bytes = name.utf8.count + value.utf8.count + 4  // ": " and CR LF
            total += bytes
            if bytes > largest?.bytes ?? 0 { largest = (name, bytes) }
        }
        guard total > maxHeaderSectionBytes, let largest else { return }
        throw NetworkError.invalidRequest(
            "the request's header fields take \(total) bytes, more than the \(maxHeaderSectionBytes) Courier sends; "
                + "the largest is '\(largest.name)' (\(largest.bytes) bytes): send the data in the body")
    }
}
