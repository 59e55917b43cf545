#if canImport(CCurl)
import CCurl
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Maps a failed transfer's `CURLcode` — never libcurl's message text — to the `URLError` code
/// the URLSession transport reports for the same event on Apple platforms, so that
/// `NetworkError`, retries and the UI behave the same with either transport.
///
/// Where one `CURLcode` covers two events, protocol state tells them apart: the OS error
/// (`CURLINFO_OS_ERRNO`) for a malformed chunked body versus a reset connection (both
/// `CURLE_RECV_ERROR`), the response's `Content-Encoding` for an unknown coding versus corrupt
/// bytes (both `CURLE_BAD_CONTENT_ENCODING`), and the OpenSSL verification result
/// (`CURLINFO_SSL_VERIFYRESULT`) for the kind of certificate problem.
package enum CurlErrorMapping {
    /// What besides the code decides the mapping.
    package struct Facts: Sendable, Hashable {
        /// `CURLINFO_OS_ERRNO`: the socket error behind the failure, 0 when none.
        package var osErrno: Int = 0
        /// `CURLINFO_SSL_VERIFYRESULT`: OpenSSL's `X509_V_ERR_*`, 0 when verification passed.
        package var sslVerifyResult: Int = 0
        /// The response's `Content-Encoding` codings, lower-cased, when a head arrived.
        package var contentCodings: [String] = []
        /// Whether the response used `Transfer-Encoding: chunked`.
        package var isChunked = false
        /// The response's `Transfer-Encoding` codings other than `chunked`, lower-cased.
        package var transferCodings: [String] = []
        /// Whether the request body stream failed.
        package var uploadFailed = false
        /// Whether Courier stopped libcurl from sending the request again after its reused
        /// connection died (see ``TransportResendRule``).
        package var resendRefused = false
        /// Whether a connection had carried the request before the failure: a failed connect or
        /// name lookup is then libcurl's fresh connection for a resend, after the request went out.
        package var requestSent = false
        /// Whether the final response's head had arrived whole.
        package var receivedHead = true
        /// `CURLINFO_HEADER_SIZE`: the bytes of the header lines libcurl took, in bytes.
        package var headerBytes = 0
        /// Whether libcurl was undoing the response's content codings (a buffered body): a
        /// `CURLE_WRITE_ERROR` is then libcurl's decoder refusing bytes after the end of the coded
        /// stream (Courier's own write callback refuses only over the body limit, reported apart).
        package var libcurlDecodes = false

        package init(
            osErrno: Int = 0, sslVerifyResult: Int = 0, contentCodings: [String] = [], isChunked: Bool = false,
            transferCodings: [String] = [], uploadFailed: Bool = false, resendRefused: Bool = false,
            requestSent: Bool = false, receivedHead: Bool = true, headerBytes: Int = 0
        ) {
            self.requestSent = requestSent
            self.receivedHead = receivedHead
            self.headerBytes = headerBytes
            self.transferCodings = transferCodings
            self.osErrno = osErrno
            self.sslVerifyResult = sslVerifyResult
            self.contentCodings = contentCodings
            self.isChunked = isChunked
            self.uploadFailed = uploadFailed
            self.resendRefused = resendRefused
        }
    }

    /// The content codings libcurl undoes for a buffered body (`CURLOPT_ACCEPT_ENCODING` with this
    /// build's features); a streamed body is decoded by ``CurlStreamDecoding``.
    package static let decodedCodings: Set<String> = ["identity", "gzip", "x-gzip", "deflate", "br", "zstd"]

    /// The `URLError` code for `code`, and the response-coding reason when it is one.
    package static func map(_ code: CURLcode, facts: Facts = Facts()) -> (URLError.Code, ResponseCodingFailure.Reason?) {
        if isOversizedHead(code, facts: facts) { return (.cannotParseResponse, nil) }
        // libcurl's reconnect to send the request again, after its reused connection died with no
        // answer: the request went out, and the server may have stored it.
        if facts.requestSent && isConnectFailure(code) { return (.networkConnectionLost, nil) }
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL: return (.unsupportedURL, nil)
        case CURLE_URL_MALFORMAT: return (.badURL, nil)
        case CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST: return (.cannotFindHost, nil)
        case CURLE_COULDNT_CONNECT, CURLE_PROXY: return (.cannotConnectToHost, nil)
        case CURLE_OPERATION_TIMEDOUT: return (.timedOut, nil)
        case CURLE_ABORTED_BY_CALLBACK:
            // A resend stopped by Courier: the connection died after the request went out.
            if facts.resendRefused { return (.networkConnectionLost, nil) }
            return facts.uploadFailed ? (.requestBodyStreamExhausted, nil) : (.cancelled, nil)
        case CURLE_SEND_FAIL_REWIND:
            // libcurl wanted to send the request again (its reused connection died) and the body
            // could not, or must not, be rewound.
            return facts.resendRefused ? (.networkConnectionLost, nil) : (.requestBodyStreamExhausted, nil)
        case CURLE_READ_ERROR: return (.requestBodyStreamExhausted, nil)
        case CURLE_TOO_MANY_REDIRECTS: return (.httpTooManyRedirects, nil)
        case CURLE_WEIRD_SERVER_REPLY: return (.badServerResponse, nil)
        case CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            // The connection closed or reset before the response was complete.
            return (.networkConnectionLost, nil)
        case CURLE_RECV_ERROR:
            // libcurl's chunked decoder fails with CURLE_RECV_ERROR and no socket error.
            if facts.isChunked && facts.osErrno == 0 { return (.cannotDecodeRawData, .malformedChunkedFraming) }
            return (.networkConnectionLost, nil)
        case CURLE_BAD_CONTENT_ENCODING:
            // libcurl reports transfer codings (RFC 9112 §7) with the same code and message as
            // content codings: the response's fields say which one failed.
            if facts.transferCodings.contains(where: { !decodedCodings.contains($0) }) {
                return (.cannotDecodeRawData, .unsupportedTransferCoding)
            }
            let unknown = facts.contentCodings.contains { !decodedCodings.contains($0) }
            return unknown ? (.cannotDecodeContentData, .unsupportedCoding) : (.cannotDecodeContentData, .corruptContent)
        case CURLE_FILESIZE_EXCEEDED: return (.dataLengthExceedsMaximum, nil)
        case CURLE_LOGIN_DENIED: return (.userAuthenticationRequired, nil)
        case CURLE_SSL_CERTPROBLEM: return (.clientCertificateRejected, nil)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_INVALIDCERTSTATUS,
            CURLE_SSL_CRL_BADFILE:
            return (certificateCode(verifyResult: facts.sslVerifyResult), nil)
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH: return (.serverCertificateUntrusted, nil)
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CIPHER, CURLE_USE_SSL_FAILED, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_ENGINE_INITFAILED:
            return (.secureConnectionFailed, nil)
        case CURLE_WRITE_ERROR where facts.libcurlDecodes && facts.receivedHead && !facts.contentCodings.isEmpty:
            // libcurl 7.88 takes one gzip member and nothing after it: a second member (RFC 1952
            // §2.2), zero padding or other bytes after the end of the coded stream.
            return (.cannotDecodeContentData, .corruptContent)
        case CURLE_OUT_OF_MEMORY, CURLE_WRITE_ERROR: return (.unknown, nil)
        default: return (.unknown, nil)
        }
    }

    /// Whether `code` says no connection could be made: the name (host or proxy) did not resolve,
    /// or the connect (or the proxy's handshake) failed.
    static func isConnectFailure(_ code: CURLcode) -> Bool {
        switch code {
        case CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_PROXY: return true
        default: return false
        }
    }

    /// Whether libcurl refused the response head for its size (`ResponseHeadOverflow`): a field
    /// line over its limit fails with `CURLE_OUT_OF_MEMORY` (`CURLE_TOO_LARGE`, 100, from libcurl
    /// 8.6) before the head is whole; a section over its limit with `CURLE_RECV_ERROR` after more
    /// header bytes than the section limit less one line, with no socket error. A reset or a TLS
    /// failure before the head comes earlier, or with an OS error.
    static func isOversizedHead(_ code: CURLcode, facts: Facts) -> Bool {
        guard !facts.receivedHead else { return false }
        switch code {
        case CURLE_OUT_OF_MEMORY: return true
        case CURLE_RECV_ERROR:
            return facts.osErrno == 0
                && facts.headerBytes > ResponseHeadOverflow.sectionLimit - ResponseHeadOverflow.fieldLineLimit
        default: return code.rawValue == 100  // CURLE_TOO_LARGE
        }
    }

    /// The Apple code for an OpenSSL `X509_V_ERR_*` verification result.
    package static func certificateCode(verifyResult: Int) -> URLError.Code {
        switch verifyResult {
        case 9, 13: return .serverCertificateNotYetValid  // CERT_NOT_YET_VALID, ERROR_IN_CERT_NOT_BEFORE_FIELD
        case 10, 14: return .serverCertificateHasBadDate  // CERT_HAS_EXPIRED, ERROR_IN_CERT_NOT_AFTER_FIELD
        case 2, 18, 19, 20, 21: return .serverCertificateHasUnknownRoot  // unknown issuer, self-signed, no local issuer
        default: return .serverCertificateUntrusted
        }
    }

    /// The `URLError` of `transfer`, failed with `code`.
    static func error(for code: CURLcode, transfer: CurlTransfer) -> URLError {
        if let failure = transfer.pinningFailure {
            // Courier's chain check refused the connection before the request was sent: reported
            // as libcurl reports its own pin mismatch.
            return URLError(
                .serverCertificateUntrusted,
                userInfo: [
                    NSLocalizedDescriptionKey: failure.description, NSURLErrorFailingURLErrorKey: transfer.url,
                    curlCodeKey: Int(CURLE_SSL_PINNEDPUBKEYNOTMATCH.rawValue), PinningFailure.userInfoKey: failure,
                ])
        }
        if transfer.trailersOverflowed {
            // Courier's header callback stopped the transfer (`CURLE_WRITE_ERROR`): the server
            // sends the same trailers again, so no retry repeats it.
            return URLError(
                .cannotParseResponse,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "the response's trailer section is larger than Courier takes "
                        + "(\(ResponseHeadOverflow.sectionLimit >> 10) KiB in all)",
                    NSURLErrorFailingURLErrorKey: transfer.url, curlCodeKey: Int(code.rawValue),
                ])
        }
        var facts = Facts(
            uploadFailed: transfer.uploadFailed, resendRefused: transfer.resendRefused,
            requestSent: transfer.sendAttempts > 0)
        var value = 0
        if ccurl_easy_getinfo_long(transfer.handle, CURLINFO_OS_ERRNO, &value) == CURLE_OK { facts.osErrno = value }
        if ccurl_easy_getinfo_long(transfer.handle, CURLINFO_SSL_VERIFYRESULT, &value) == CURLE_OK {
            facts.sslVerifyResult = value
        }
        facts.receivedHead = transfer.receivedHead
        facts.libcurlDecodes = transfer.libcurlDecodes
        if ccurl_easy_getinfo_long(transfer.handle, CURLINFO_HEADER_SIZE, &value) == CURLE_OK { facts.headerBytes = value }
        let headers = transfer.responseHeaders
        facts.contentCodings = headers.values(for: "Content-Encoding").flatMap {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }
        let transferCodings = headers.values(for: "Transfer-Encoding").flatMap {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }
        facts.isChunked = transferCodings.contains("chunked")
        facts.transferCodings = transferCodings.filter { $0 != "chunked" && !$0.isEmpty }
        let (urlCode, reason) = map(code, facts: facts)
        let detail = String(cString: transfer.errorBuffer)
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail,
            NSURLErrorFailingURLErrorKey: transfer.url,
            curlCodeKey: Int(code.rawValue),
        ]
        if let reason { userInfo[ResponseCodingFailure.reasonKey] = reason }
        if code == CURLE_WRITE_ERROR, reason == .corruptContent,
            CurlStreamDecoding.codings(headers).allSatisfy(CurlStreamDecoding.decodedCodings.contains)
        {
            userInfo[inflatableKey] = true
        }
        if code == CURLE_SSL_PINNEDPUBKEYNOTMATCH, let host = transfer.url.host {
            let presented = (CurlPinCheck.verifiedChainDigests(transfer.handle) ?? []).map { SPKIPin(digestBytes: $0).base64 }
            let failure = PinningFailure.pinMismatch(host: host.lowercased(), presented: presented)
            userInfo[PinningFailure.userInfoKey] = failure
            userInfo[NSLocalizedDescriptionKey] = failure.description
        }
        if urlCode == .cannotParseResponse, let detail = userInfo[NSLocalizedDescriptionKey] as? String {
            return ResponseHeadOverflow.error(detail: detail, userInfo: userInfo)
        }
        return URLError(urlCode, userInfo: userInfo)
    }

    /// The `URLError.userInfo` key marking (`true`) a body libcurl refused after the end of its
    /// first coded stream whose codings Courier inflates itself (``CurlStreamDecoding``).
    static let inflatableKey = "CourierCurlInflatable"

    /// The `URLError.userInfo` key holding the `CURLcode` (an `Int`) behind the error.
    package static let curlCodeKey = "CourierCurlCode"
}

extension URLError {
    /// The libcurl `CURLcode` behind this error, when `CurlTransport` produced it.
    public var curlCode: Int? { userInfo[CurlErrorMapping.curlCodeKey] as? Int }
}
#endif
