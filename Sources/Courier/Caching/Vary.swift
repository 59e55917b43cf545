import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Secondary cache keys from the `Vary` response header (RFC 9111 §4.1).
enum Vary {
    /// The lower-cased field names `headers`' `Vary` lists; `["*"]` for `Vary: *`.
    static func fieldNames(in headers: HTTPHeaders) -> [String] {
        headers.cacheValues("vary")
            .flatMap { $0.split(separator: ",") }
            .map { HeaderScanning.trim($0).lowercased() }
            .filter { !$0.isEmpty }
    }

    /// `true` for `Vary: *`, which can never be matched and so is never served (§4.1).
    static func isWildcard(_ headers: HTTPHeaders) -> Bool { fieldNames(in: headers).contains("*") }

    /// The values of the fields `names` in `request`, normalised: repeated fields combined and
    /// whitespace around commas collapsed (§4.1 allows this normalisation).
    static func requestValues(_ names: [String], of request: URLRequest) -> [String: String?] {
        var values: [String: String?] = [:]
        for name in names where name != "*" {
            values[name] = .some(request.value(forHTTPHeaderField: name).map(normalize))
        }
        return values
    }

    /// `true` when `request` carries the same values for every field `stored` varies on.
    static func matches(_ stored: CachedResponse, _ request: URLRequest) -> Bool {
        let names = fieldNames(in: stored.headers)
        if names.contains("*") { return false }
        for name in names {
            let now = request.value(forHTTPHeaderField: name).map(normalize)
            let then = stored.varyingRequestHeaders[name] ?? nil
            if now != then { return false }
        }
        return true
    }

    /// A stable identifier for a set of varying values: `name=value` pairs sorted by name, joined
    /// by newlines; absent fields are written without `=`.
    static func variantID(_ values: [String: String?]) -> String {
        values.sorted { $0.key < $1.key }
            .map { name, value in value.map { "\(name)=\($0)" } ?? name }
            .joined(separator: "\n")
    }

    private static func normalize(_ value: String) -> String {
        value.split(separator: ",")
            .map { HeaderScanning.trim($0) }
            .joined(separator: ", ")
    }
}
