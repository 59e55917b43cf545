import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The framing of a response body that no transport may act on.
///
/// A response whose `Content-Length` fields (or the members of one field's list) disagree has
/// invalid framing: a user agent must discard it and close the connection (RFC 9112 §6.3, rule 5;
/// RFC 9110 §8.6). libcurl 7.88, under both transports on Linux, takes one of the values and
/// reads that many bytes: measured, `Content-Length: 100000` then `Content-Length: 50000` gave a
/// successful call with the first 50,000 bytes (a download placed them as the whole file), and
/// the bytes left on a kept-alive connection were read as the next request's response. A value
/// that is not a decimal number (`0x10`) is refused as well.
///
/// A `206 Partial Content` to a request without `Range` is refused too: its body is a part of the
/// representation, and only a range request may get one (RFC 9110 §15.3.7). Measured on both
/// transports: a call answered `206` with `Content-Range: bytes 0-9/36` succeeded with the 10
/// bytes as the whole body.
package enum ResponseFraming {
    /// Throws for a response whose body length cannot be told from its head, or whose body is a
    /// part the request did not ask for.
    ///
    /// - Throws: `URLError(.badServerResponse)` naming the disagreeing values, or the `206`.
    package static func check(_ response: HTTPResponse, to request: URLRequest) throws {
        if response.statusCode == 206, request.value(forHTTPHeaderField: "Range") == nil {
            throw URLError(
                .badServerResponse,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "206 Partial Content to a request without Range: its body is a part, not the response (RFC 9110 §15.3.7)",
                    NSURLErrorFailingURLErrorKey: request.url as Any,
                ])
        }
        // Transfer-Encoding overrides Content-Length (RFC 9112 §6.3, rule 3), and a response to
        // HEAD, a 204 or a 304 has no body the field could frame.
        guard response.headers["Transfer-Encoding"] == nil, request.httpMethod?.uppercased() != "HEAD",
            response.statusCode != 204, response.statusCode != 304
        else { return }
        let fields = response.headers.values(for: "Content-Length")
        guard !fields.isEmpty else { return }
        let values = fields.flatMap {
            $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        }
        // `Content-Length = 1*DIGIT` (RFC 9110 §8.6). libcurl reads a value up to its first other
        // character ("0x10" as 0: an empty body and a successful call; "100000 50000" as 100000)
        // and ignores one past 64 bits (the body then runs to the close).
        if let invalid = values.first(where: { value in
            value.isEmpty || !value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } || Int64(value) == nil
        }) {
            throw URLError(
                .badServerResponse,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "the response's Content-Length \"\(invalid.prefix(40))\" is not a length: its body cannot be framed (RFC 9112 §6.3)",
                    NSURLErrorFailingURLErrorKey: request.url as Any,
                ])
        }
        guard Set(values.map { Int64($0) }).count > 1 else { return }
        throw URLError(
            .badServerResponse,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "the response's Content-Length values disagree (\(values.joined(separator: ", "))): its body cannot be framed (RFC 9112 §6.3)",
                NSURLErrorFailingURLErrorKey: request.url as Any,
            ])
    }
}
