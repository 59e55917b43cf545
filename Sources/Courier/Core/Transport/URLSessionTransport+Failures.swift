import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionTransport {
    /// URLSession on Linux reports a connection that died mid-response as `URLError(.unknown)`
    /// (-1, the code it also uses for TLS failures) carrying libcurl's message: "transfer closed
    /// with N bytes remaining to read" (CURLE_PARTIAL_FILE) or "Recv failure: Connection reset by
    /// peer" (CURLE_RECV_ERROR). FoundationNetworking exposes no libcurl code, so these two message
    /// prefixes are the only signal; both become `.networkConnectionLost`, the code Apple
    /// platforms use for the same event, so retries and the UI treat it the same everywhere.
    ///
    /// A connection closed before any byte of the response (libcurl's CURLE_GOT_NOTHING, "Empty
    /// reply from server") is `URLError.badServerResponse` there: `.networkConnectionLost` too, as
    /// on Apple platforms and over `CurlTransport` — the request may have been received.
    static func connectionLostMidResponse(_ error: URLError) -> URLError? {
        let message = error.localizedDescription
        switch error.code {
        case .unknown:
            guard message.hasPrefix("transfer closed with") || message.hasPrefix("Recv failure") else { return nil }
        case .badServerResponse:
            guard message.hasPrefix("Empty reply from server") else { return nil }
        default:
            return nil
        }
        var userInfo = error.userInfo
        userInfo[NSUnderlyingErrorKey] = error as NSError
        return URLError(.networkConnectionLost, userInfo: userInfo)
    }

    /// URLSession on Linux reports every certificate failure as `URLError.unknown` (-1) with
    /// libcurl's message (measured with FoundationNetworking on libcurl 7.88 and OpenSSL 3.0: "SSL
    /// certificate problem: certificate has expired", "… is not yet valid", "… self-signed
    /// certificate", "… unable to get local issuer certificate", "SSL: no alternative certificate
    /// subject name matches target host name '…'"). These become the `serverCertificate…` code
    /// Apple platforms report for the same certificate (see ``CertificateFailure``), the original
    /// error kept as `NSUnderlyingErrorKey`.
    package static func certificateFailure(_ error: URLError) -> URLError? {
        guard error.code == .unknown, let code = CertificateFailure.code(forLibcurlMessage: error.localizedDescription)
        else { return nil }
        var userInfo = error.userInfo
        userInfo[NSUnderlyingErrorKey] = error as NSError
        return URLError(code, userInfo: userInfo)
    }

    /// `error` with the codes Apple platforms use for the same event where URLSession on Linux
    /// reports `URLError.unknown`: a connection lost mid-response, a refused certificate, an
    /// oversized response head (`ResponseHeadOverflow`), a refused `Content-Length`. Applied
    /// on every platform: Apple's URLSession never reports libcurl's messages, so there it
    /// returns `error` unchanged.
    package static func mappedFailure(_ error: URLError) -> URLError {
        connectionLostMidResponse(error) ?? certificateFailure(error) ?? oversizedHead(error) ?? invalidLength(error) ?? error
    }

    /// URLSession on Linux reports a `Content-Length` that libcurl refuses (a negative or
    /// non-numeric value: "Invalid Content-Length: value", CURLE_WEIRD_SERVER_REPLY) as
    /// `URLError.unknown`: it is `URLError(.badServerResponse)`, as `CurlTransport` reports it
    /// (measured before: -1 over URLSession, -1011 over CurlTransport for the same reply).
    static func invalidLength(_ error: URLError) -> URLError? {
        guard error.code == .unknown, error.localizedDescription.hasPrefix("Invalid Content-Length") else { return nil }
        var userInfo = error.userInfo
        userInfo[NSUnderlyingErrorKey] = error as NSError
        return URLError(.badServerResponse, userInfo: userInfo)
    }

    /// URLSession on Linux decodes a body's content coding through libcurl (7.88), which takes
    /// one gzip member and fails the task at any byte after it (a second member, RFC 1952 §2.2,
    /// zero padding, other bytes) with `URLError.unknown` and its write-error message ("Failed
    /// writing received data to disk/application"). For a `response` in a content coding this is
    /// `URLError(.cannotDecodeContentData)` with ``ResponseCodingFailure/Reason/corruptContent``
    /// (``NetworkError/undecodableResponse(_:)``) instead of an unexplained transport error;
    /// `nil` for any other error. `CurlTransport` decodes such a body whole.
    static func undecodableContent(_ error: URLError, response: URLResponse?) -> URLError? {
        guard error.code == .unknown, error.localizedDescription.hasPrefix("Failed writing received data"),
            let http = response as? HTTPURLResponse,
            let coding = http.value(forHTTPHeaderField: "Content-Encoding")?.trimmingCharacters(in: .whitespaces),
            !coding.isEmpty, coding.lowercased() != "identity"
        else { return nil }
        var userInfo = error.userInfo
        userInfo[NSUnderlyingErrorKey] = error as NSError
        userInfo[NSLocalizedDescriptionKey] =
            "Error while processing content unencoding: bytes after the end of the \(coding) stream (\(error.localizedDescription))"
        userInfo[ResponseCodingFailure.reasonKey] = ResponseCodingFailure.Reason.corruptContent
        return URLError(.cannotDecodeContentData, userInfo: userInfo)
    }

    /// FoundationNetworking's failure for a response head over libcurl's limits
    /// (`ResponseHeadOverflow`), reported as `URLError(.cannotParseResponse)`, as `CurlTransport`
    /// reports it; `nil` for any other error.
    static func oversizedHead(_ error: URLError) -> URLError? {
        guard error.code == .unknown, ResponseHeadOverflow.isLibcurlMessage(error.localizedDescription) else { return nil }
        var userInfo = error.userInfo
        userInfo[NSUnderlyingErrorKey] = error as NSError
        return ResponseHeadOverflow.error(detail: error.localizedDescription, userInfo: userInfo)
    }
}
