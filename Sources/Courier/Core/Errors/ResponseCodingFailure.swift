import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport received a response but could not undo its content coding (RFC 9110 §8.4.1) or
/// its transfer coding (RFC 9112 §7): the error behind ``NetworkError/undecodableResponse(_:)``.
///
/// URLSession decodes `gzip`, `deflate` and `br` itself (on Linux through libcurl, which also knows
/// `zstd`) and on Linux fails the whole task when it cannot, so the status and headers never reach
/// Courier. Retrying does not help: the server sends the same bytes again. CourierCurl's
/// `CurlTransport` asks a buffered `GET` or `HEAD` whose response uses a content coding libcurl
/// does not know once more without decoding, and returns the bytes as sent with their
/// `Content-Encoding` (as Apple's URLSession does); other methods and streamed calls get
/// ``Reason/unsupportedCoding``.
public struct ResponseCodingFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What could not be decoded.
    public enum Reason: Sendable, Hashable {
        /// A `Content-Encoding` the transport does not implement, e.g. `Content-Encoding: x-custom`
        /// (RFC 9110 §8.4.1).
        case unsupportedCoding
        /// A `Transfer-Encoding` other than `chunked` the transport does not implement, e.g.
        /// `Transfer-Encoding: x-custom, chunked` (RFC 9112 §7; a server must not send a transfer
        /// coding the request did not accept in `TE`, §6.1).
        case unsupportedTransferCoding
        /// A known content coding whose bytes do not decode, e.g. `Content-Encoding: gzip` on a
        /// body that is not gzip (`URLError.cannotDecodeContentData` on Apple platforms).
        case corruptContent
        /// Malformed `chunked` framing (RFC 9112 §7.1), e.g. a chunk size that is not hexadecimal.
        case malformedChunkedFraming
    }

    /// What could not be decoded.
    public let reason: Reason
    /// The transport's error, kept for logs (its message names the coding problem).
    public let underlying: URLError

    /// Creates a failure.
    package init(reason: Reason, underlying: URLError) {
        self.reason = reason
        self.underlying = underlying
    }

    /// The failure `error` reports, or `nil` when it is about something else.
    ///
    /// A reason stored under ``reasonKey`` wins. Apple platforms use dedicated codes
    /// (`cannotDecodeContentData`, `cannotDecodeRawData`).
    /// swift-corelibs-foundation on Linux reports every libcurl failure as `URLError.unknown`
    /// (-1) with libcurl's message as the description, so those are recognised by the messages
    /// of libcurl 7.x/8.x: "Unrecognized content encoding type…" (CURLE_BAD_CONTENT_ENCODING for an
    /// unknown coding), "Error while processing content unencoding…" and "Unrecognized or bad HTTP
    /// Content or Transfer-Encoding" (undecodable bytes), "…in chunked-encoding" (bad framing).
    package init?(_ error: URLError) {
        if let reason = error.userInfo[Self.reasonKey] as? Reason {
            // A transport that knows the reason from its own error codes says so (CourierCurl).
            self.init(reason: reason, underlying: error)
            return
        }
        switch error.code {
        case .cannotDecodeContentData, .cannotDecodeRawData:
            self.init(reason: .corruptContent, underlying: error)
        case .unknown:
            let message = ((error.userInfo[NSLocalizedDescriptionKey] as? String) ?? "").lowercased()
            if message.contains("unrecognized content encoding type") {
                self.init(reason: .unsupportedCoding, underlying: error)
            } else if message.contains("chunked-encoding") {
                self.init(reason: .malformedChunkedFraming, underlying: error)
            } else if message.contains("content unencoding") || message.contains("bad http content or transfer-encoding") {
                self.init(reason: .corruptContent, underlying: error)
            } else {
                return nil
            }
        default:
            return nil
        }
    }

    /// The `URLError.userInfo` key under which a transport states the ``Reason`` it determined
    /// itself, from protocol state rather than message text.
    package static let reasonKey = "CourierResponseCodingReason"

    /// The `URLError.userInfo` key a transport sets to `true` when the body's bytes ended before
    /// its coded stream did (a ``Reason/corruptContent`` body cut short, e.g. by a closed
    /// connection), rather than holding bytes that do not decode.
    package static let endedEarlyKey = "CourierCodedStreamEndedEarly"

    /// Whether the body's bytes ended before its coded stream did (``endedEarlyKey``): a cut body,
    /// after which a long-lived stream reconnects as it does after any other cut.
    package var endedEarly: Bool { underlying.userInfo[Self.endedEarlyKey] as? Bool == true }

    public var description: String {
        let what: String
        switch reason {
        case .unsupportedCoding: what = "unsupported content coding"
        case .unsupportedTransferCoding: what = "unsupported transfer coding"
        case .corruptContent: what = "content coding does not decode"
        case .malformedChunkedFraming: what = "malformed chunked transfer coding"
        }
        return "\(what) (URLError \(underlying.code.rawValue): \(underlying.localizedDescription))"
    }
}
