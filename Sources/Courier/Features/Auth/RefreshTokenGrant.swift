import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How ``TokenManager`` exchanges a refresh token for new tokens: how the request is built and
/// how the token endpoint's answer is read. The request goes straight to the transport — never
/// through the pipeline — so a 401 from it cannot trigger another refresh.
///
/// The request's `timeoutInterval` limits the whole refresh, not only the silence between two
/// bytes: a token endpoint (or a proxy) that trickles its answer fails the refresh with
/// `URLError.timedOut` once that time has passed on the client's clock, instead of holding every
/// call that waits for a token for as long as the trickle lasts.
///
/// Use ``oauth2(tokenURL:encoding:clientID:scope:additionalParameters:timeout:)`` for a standard
/// OAuth 2.0 server (RFC 6749 §6), or supply both closures for another shape:
/// ```swift
/// let grant = RefreshTokenGrant(
///     makeRequest: { refreshToken in
///         var request = URLRequest(url: URL(string: "https://api.example.com/session/renew")!)
///         request.httpMethod = "POST"
///         request.setValue(refreshToken, forHTTPHeaderField: "X-Refresh-Token")
///         return request
///     },
///     parseResponse: { response, current in
///         try RefreshTokenGrant.parseOAuth2Response(response, current: current, receivedAt: Date())
///     })
/// ```
public struct RefreshTokenGrant: Sendable {
    /// Builds the refresh request from the stored refresh token.
    public typealias RequestBuilder = @Sendable (_ refreshToken: String) throws -> URLRequest
    /// Reads the token endpoint's response into the tokens to store. `current` is what is stored
    /// now (to keep its refresh token when the server did not rotate it). Throw
    /// ``TokenRefreshRejection`` when the refresh token was refused — that ends the session;
    /// any other error is a transient failure.
    public typealias ResponseParser = @Sendable (_ response: HTTPResponse, _ current: AuthTokens) throws -> AuthTokens

    /// Builds the request.
    public var makeRequest: RequestBuilder
    /// Reads the response. A parser set here counts `expires_in` from whatever clock it reads
    /// (the sample above: `Date()`); the ``oauth2(tokenURL:encoding:clientID:scope:additionalParameters:timeout:)``
    /// parser counts it from the ``TokenManager``'s `now` at receipt, until this is replaced.
    public var parseResponse: ResponseParser {
        didSet { parseReceived = nil }
    }

    /// The parser with the time the response arrived by the ``TokenManager``'s clock, when the
    /// grant's parser takes one (``oauth2(tokenURL:encoding:clientID:scope:additionalParameters:timeout:)``);
    /// dropped when ``parseResponse`` is replaced.
    private var parseReceived:
        (@Sendable (_ response: HTTPResponse, _ current: AuthTokens, _ receivedAt: Date) throws -> AuthTokens)?

    /// The most body bytes a token endpoint's answer may hold, counted after content decoding:
    /// 1 MiB. The request goes straight to the transport, outside the pipeline step that applies
    /// `APIClient.Configuration.maximumResponseBodySize`; without a limit of its own, a token
    /// endpoint (or a proxy, a captive portal) answering with a compression bomb was held whole in
    /// memory (measured: 256 MiB from 256 KiB of gzip, on both transports). A larger answer fails
    /// the refresh with ``NetworkError/responseTooLarge(limit:)``, a transient failure.
    package static let maximumResponseSize = 1 << 20

    /// What the transport reads while it sends a token request: the body limit alone.
    package static var responseReporter: TransportReporter {
        TransportReporter(progress: nil, timings: nil, maximumBodySize: maximumResponseSize)
    }

    /// Creates a grant from both closures.
    public init(makeRequest: @escaping RequestBuilder, parseResponse: @escaping ResponseParser) {
        self.makeRequest = makeRequest
        self.parseResponse = parseResponse
    }

    /// The body format of the refresh request.
    public enum BodyEncoding: Sendable, Hashable {
        /// `application/x-www-form-urlencoded`, as RFC 6749 §6 specifies.
        case form
        /// `application/json`, which many non-standard token endpoints expect.
        case json
    }

    /// The OAuth 2.0 refresh-token grant (RFC 6749 §6):
    /// `POST tokenURL` with `grant_type=refresh_token&refresh_token=…` (plus `client_id`, `scope`
    /// and any extra parameters), `Accept: application/json`, `Cache-Control: no-store`; the
    /// answer is read by ``parseOAuth2Response(_:current:receivedAt:)``, `receivedAt` being the
    /// ``TokenManager``'s `now` when the answer arrived.
    ///
    /// - Parameters:
    ///   - tokenURL: The token endpoint.
    ///   - encoding: The body format; form-encoded by default.
    ///   - clientID: `client_id` for public clients (RFC 6749 §2.3.1), when the server needs it.
    ///   - scope: `scope` to request, when narrower than the original grant.
    ///   - additionalParameters: More body parameters (sorted by name so the body is stable).
    ///   - timeout: The refresh's time limit in seconds-as-`Duration` (rounded up to whole
    ///     seconds, at least 1 s); 15 s by default. It is the request's idle timeout and, through
    ///     its `timeoutInterval`, the longest the whole refresh may take (see ``RefreshTokenGrant``).
    public static func oauth2(
        tokenURL: URL,
        encoding: BodyEncoding = .form,
        clientID: String? = nil,
        scope: String? = nil,
        additionalParameters: [String: String] = [:],
        timeout: Duration = .seconds(15)
    ) -> RefreshTokenGrant {
        var grant = RefreshTokenGrant(
            makeRequest: { refreshToken in
                var parameters: [(String, String)] = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
                if let clientID { parameters.append(("client_id", clientID)) }
                if let scope { parameters.append(("scope", scope)) }
                parameters += additionalParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }

                var request = URLRequest(url: tokenURL)
                request.httpMethod = "POST"
                request.timeoutInterval = Courier.RequestBuilder.idleTimeout(for: timeout)
                request.setValue("application/json", forHTTPHeaderField: "Accept")
                request.setValue("no-store", forHTTPHeaderField: "Cache-Control")
                switch encoding {
                case .form:
                    request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
                    request.httpBody = Data(formEncoded(parameters).utf8)
                case .json:
                    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                    request.httpBody = try JSONSerialization.data(
                        withJSONObject: Dictionary(parameters, uniquingKeysWith: { first, _ in first }),
                        options: [.sortedKeys])
                }
                return request
            },
            parseResponse: { response, current in
                try parseOAuth2Response(response, current: current, receivedAt: Date())
            })
        grant.parseReceived = { response, current, receivedAt in
            try parseOAuth2Response(response, current: current, receivedAt: receivedAt)
        }
        return grant
    }

    /// Reads the token endpoint's answer, received at `receivedAt` by the ``TokenManager``'s
    /// clock: the grant's own parser counts `expires_in` from there when it takes a time of
    /// receipt (``oauth2(tokenURL:encoding:clientID:scope:additionalParameters:timeout:)``), else
    /// ``parseResponse`` is used as is.
    ///
    /// - Throws: What the parser throws: ``TokenRefreshRejection`` or a transient error.
    package func parse(_ response: HTTPResponse, current: AuthTokens, receivedAt: Date) throws -> AuthTokens {
        if let parseReceived { return try parseReceived(response, current, receivedAt) }
        return try parseResponse(response, current)
    }

    /// Reads a token endpoint's answer the OAuth 2.0 way.
    ///
    /// - 2xx with an access-token body (RFC 6749 §5.1): the new tokens; when the body has no
    ///   `refresh_token`, the current one is kept (RFC 6749 §6); `expires_in` counts from `receivedAt`,
    ///   or without it the JWT `exp` is corrected by the response's `Date` (clock skew).
    /// - A `token_type` other than `Bearer` (compared case-insensitively, RFC 6749 §5.1), such as
    ///   `DPoP` or `mac`: throws ``TokenRefreshRejection`` with `error` `unsupported_token_type` —
    ///   a client must not use a token whose type it does not understand (RFC 6749 §7.1), and
    ///   Courier sends only `Authorization: Bearer`. A body without `token_type` is read as Bearer
    ///   (lenient: some servers omit the required field).
    /// - 400 or 401 (RFC 6749 §5.2: `invalid_grant`, `invalid_client`, …), or any response whose
    ///   JSON `error` is `invalid_grant`: throws ``TokenRefreshRejection`` — the session is over.
    ///   Its `error` and `errorDescription` are the server's, with `current`'s tokens hidden.
    /// - Anything else (5xx, 429, a malformed 2xx body): throws the ``NetworkError`` for it — a
    ///   transient failure; the user stays signed in. Its message, code and snippet have
    ///   `current`'s tokens hidden too (a gateway's error page may repeat the request).
    ///
    /// - Throws: ``TokenRefreshRejection`` or ``NetworkError`` as above.
    public static func parseOAuth2Response(
        _ response: HTTPResponse, current: AuthTokens, receivedAt: Date
    ) throws -> AuthTokens {
        let details = ErrorBodyParser.parse(response)
        let oauthError = details.code
        // The server's free text may repeat the token it refuses (`refresh token rt-… has
        // expired`), a gateway's error page the request it could not pass on: the rejection or
        // the error reaches session events, the waiting calls and logs without them.
        let tokens = [current.accessToken, current.refreshToken].compactMap { $0 }
        if response.statusCode == 400 || response.statusCode == 401 || oauthError == "invalid_grant" {
            let redactor = Redactor()
            var secrets = SecretValues()
            for token in tokens { secrets.insert(token, minimumLength: redactor.minimumSecretLength) }
            throw TokenRefreshRejection(
                statusCode: response.statusCode, error: oauthError.map { redactor.scrub($0, secrets: secrets) },
                errorDescription: details.message.map { redactor.scrub($0, secrets: secrets) })
        }
        guard response.isSuccess else {
            throw NetworkError(response: response, hiding: tokens)
        }
        let body: OAuthTokenResponse
        do {
            body = try JSONDecoder().decode(OAuthTokenResponse.self, from: response.data)
        } catch {
            let path = (error as? DecodingError)?.codingPathDescription ?? CodingPathFormatter.rootDescription
            // Only the status and size go into the error: the body may hold tokens.
            var failure = DecodingFailure(
                underlying: error, codingPath: path, typeName: "\(OAuthTokenResponse.self)", response: response)
            failure.bodySnippet = "<\(response.data.count) bytes, not shown>"
            throw NetworkError.decoding(failure)
        }
        if let tokenType = body.tokenType, !body.isBearer {
            throw TokenRefreshRejection.unsupportedTokenType(tokenType, statusCode: response.statusCode)
        }
        return body.tokens(receivedAt: receivedAt, serverDate: response.date, keeping: current.refreshToken)
    }

    /// `application/x-www-form-urlencoded` (WHATWG URL §5.2, RFC 6749 Appendix B): unreserved
    /// characters kept, space as `+`, every other byte percent-encoded.
    package static func formEncoded(_ parameters: [(String, String)]) -> String {
        func encode(_ text: String) -> String {
            var result = ""
            for byte in text.utf8 {
                switch byte {
                case _ where byte.isASCIIAlphanumeric || "-._*".utf8.contains(byte):
                    result.unicodeScalars.append(Unicode.Scalar(byte))
                case UInt8(ascii: " "):
                    result.append("+")
                default:
                    let hex = Array("0123456789ABCDEF".utf8)
                    result.append("%")
                    result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                    result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0x0F)]))
                }
            }
            return result
        }
        return parameters.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }
}
