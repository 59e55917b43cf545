/// Header fields a cache never stores (RFC 9111 §3.1, RFC 9110 §7.6.1): the fields that describe
/// one connection rather than the response, and every field the `Connection` field names.
enum HopByHop {
    /// Connection-specific fields (RFC 9110 §7.6.1, RFC 9112 §6.1) and the proxy authentication
    /// fields that are addressed to the next hop (RFC 9110 §11.7), lower-cased.
    static let fields: Set<String> = [
        "connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authentication-info", "proxy-authorization",
    ]

    /// The lower-cased names `headers` must not keep: ``fields`` plus the `Connection` options.
    static func names(in headers: HTTPHeaders) -> Set<String> {
        var names = fields
        for value in headers.cacheValues("connection") {
            for option in value.split(separator: ",") {
                let name = HeaderScanning.trim(option).lowercased()
                if !name.isEmpty { names.insert(name) }
            }
        }
        return names
    }

    /// `headers` without the fields ``names(in:)`` lists; unchanged (no copy) when none is present.
    static func removed(from headers: HTTPHeaders) -> HTTPHeaders {
        let names = names(in: headers)
        guard headers.fields.contains(where: { names.contains($0.name.lowercased()) }) else { return headers }
        return HTTPHeaders(headers.fields.filter { !names.contains($0.name.lowercased()) })
    }
}
