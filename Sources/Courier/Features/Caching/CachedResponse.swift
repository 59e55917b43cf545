import Foundation

/// One stored response (a variant under a ``CacheKey``), with what RFC 9111 needs to compute its
/// age and to match it to later requests.
///
/// Storage backends persist these values as they are; `byteCount` is what byte limits count.
public struct CachedResponse: Sendable, Hashable {
    /// The status code of the stored response, e.g. `200`.
    public var statusCode: Int
    /// The stored header fields, updated by each `304 Not Modified` (RFC 9111 §4.3.4).
    public var headers: HTTPHeaders
    /// The response body.
    public var body: Data
    /// The URL the response came from.
    public var url: URL?
    /// When the request that produced (or last validated) this response was sent: `request_time`
    /// of RFC 9111 §4.2.3, on the cache's clock.
    public var requestTime: Date
    /// When that response was received: `response_time` of RFC 9111 §4.2.3.
    public var responseTime: Date
    /// The request header fields the response's `Vary` names, as sent (lower-cased names; `nil`
    /// when the request did not carry the field). Empty when the response has no `Vary`. A field
    /// that carries a credential (`Authorization`, `Cookie`, an API key: a name the default
    /// ``Redactor`` hides) is kept as the SHA-256 digest of its value (`sha256:` and 64 hex
    /// digits), never the credential itself.
    public var varyingRequestHeaders: [String: String?]

    /// Creates a stored response.
    public init(
        statusCode: Int, headers: HTTPHeaders, body: Data, url: URL?,
        requestTime: Date, responseTime: Date, varyingRequestHeaders: [String: String?] = [:]
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.url = url
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyingRequestHeaders = varyingRequestHeaders
    }

    /// Identifies the variant within its key: the `Vary`-named request fields and their values,
    /// e.g. `accept-language=de`; empty for a response without `Vary`. A newer response with the
    /// same ID replaces the stored one (RFC 9111 §4.1).
    package var variantID: String { Vary.variantID(varyingRequestHeaders) }

    /// Approximate memory/disk cost in bytes: body, header text, URL, and a fixed overhead.
    /// The largest delta-seconds a cache sends or computes with: 2^31 (RFC 9111 §1.2.2).
    static let largestAge: TimeInterval = 2_147_483_648

    package var byteCount: Int {
        var count = body.count + 128 + (url?.absoluteString.utf8.count ?? 0)
        for field in headers { count += field.name.utf8.count + field.value.utf8.count + 4 }
        for (name, value) in varyingRequestHeaders { count += name.utf8.count + (value?.utf8.count ?? 0) + 4 }
        return count
    }

    /// The entry as an `HTTPResponse`, with an `Age` header giving `age` in whole seconds
    /// (RFC 9111 §5.1; an age beyond 2147483648 s is sent as 2147483648, §1.2.2) and, when
    /// `includeBody` is `false`, no body (answers to HEAD).
    func response(age: TimeInterval, includeBody: Bool = true) -> HTTPResponse {
        let seconds = age.isFinite ? Int(min(max(0, age), Self.largestAge).rounded(.down)) : Int(Self.largestAge)
        let headers = self.headers.cacheReplacing("age", name: "Age", with: String(seconds))
        return HTTPResponse(statusCode: statusCode, headers: headers, body: includeBody ? body : Data(), url: url)
    }
}
