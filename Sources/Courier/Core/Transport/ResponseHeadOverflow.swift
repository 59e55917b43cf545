import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response head larger than the transport takes.
///
/// libcurl — `CurlTransport`, and URLSession on Linux, which runs on it — refuses a header field
/// line over 100 KiB (`CURL_MAX_HTTP_HEADER`) and a header section over 300 KiB in all. Both
/// transports report either as `URLError(.cannotParseResponse)`, which no retry repeats: the
/// server sends the same head again. (Measured before: over `CurlTransport` the section limit read
/// as a lost connection, `URLError(.networkConnectionLost)`, and a `GET` went out 3 times; a long
/// line read as "Out of memory", `URLError(.unknown)`, on both transports.)
package enum ResponseHeadOverflow {
    /// The longest header field line libcurl takes, in bytes.
    package static let fieldLineLimit = 100 << 10
    /// The largest header section libcurl takes, in bytes.
    package static let sectionLimit = 300 << 10

    /// The error for an oversized head: `URLError(.cannotParseResponse)` naming the limits, with
    /// `detail` (the library's own message) and `userInfo`'s other entries kept.
    package static func error(detail: String, userInfo: [String: Any] = [:]) -> URLError {
        var userInfo = userInfo
        userInfo[NSLocalizedDescriptionKey] =
            "the response's header section is larger than libcurl takes "
            + "(\(fieldLineLimit >> 10) KiB a field line, \(sectionLimit >> 10) KiB in all): \(detail)"
        return URLError(.cannotParseResponse, userInfo: userInfo)
    }

    /// Whether `message` is what FoundationNetworking's libcurl says of an oversized head
    /// (`URLError.unknown`): "Out of memory" for a long field line (libcurl refuses to grow its
    /// header buffer without a message of its own), "Too large response headers: …" for the section.
    static func isLibcurlMessage(_ message: String) -> Bool {
        message == "Out of memory" || message.hasPrefix("Too large response headers")
    }
}
