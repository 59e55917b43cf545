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

    /// The request field every entry is keyed on as if the response listed it in `Vary`:
    /// `Authorization` that the request itself carries (an endpoint's Basic credentials or its
    /// own bearer token; a ``TokenManager``'s token is added after the cache, whose partitions
    /// keep accounts apart). A response to one user's credentials is never served to another
    /// user's request, nor to a request without credentials, in the same partition.
    static let credentialField = "authorization"

    /// The values of the fields `names` in `request` as an entry keeps them (see
    /// ``storedValue(_:name:)``), and the request's ``credentialField`` when it has one.
    static func requestValues(_ names: [String], of request: URLRequest) -> [String: String?] {
        var values: [String: String?] = [:]
        for name in names where name != "*" {
            values[name] = .some(request.value(forHTTPHeaderField: name).map { storedValue($0, name: name) })
        }
        if let credential = request.value(forHTTPHeaderField: credentialField) {
            values[credentialField] = .some(storedValue(credential, name: credentialField))
        }
        return values
    }

    /// `value` of the field `name` (lower-case) as an entry keeps it: normalised (see
    /// ``normalize(_:name:)``), and for a field that carries a credential — `Authorization`,
    /// `Cookie`, an API key, any name the default ``Redactor`` hides — its SHA-256 digest
    /// (`sha256:…`), so that a response varying on it never puts the credential itself in a cache
    /// entry (a ``DiskCacheStorage`` file); equal values still give equal digests.
    static func storedValue(_ value: String, name: String) -> String {
        let normalized = normalize(value, name: name)
        guard RedactionList.defaultHeaders.matches(name) else { return normalized }
        let digest = SHA256.hash(Array(normalized.utf8))
        return "sha256:" + digest.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }

    /// `true` when `request` carries the ``credentialField`` `stored` answered (or none on both
    /// sides): only such an entry may be offered for the request's validation (§4.3.4), or a
    /// `304` would serve one user's stored answer to another's request.
    static func hasSameCredential(_ stored: CachedResponse, _ request: URLRequest) -> Bool {
        let now = request.value(forHTTPHeaderField: credentialField).map { storedValue($0, name: credentialField) }
        return now == (stored.varyingRequestHeaders[credentialField] ?? nil)
    }

    /// `true` when `request` carries the same values for every field `stored` varies on, and the
    /// same ``credentialField`` (or none on both sides).
    static func matches(_ stored: CachedResponse, _ request: URLRequest) -> Bool {
        var names = fieldNames(in: stored.headers)
        if names.contains("*") { return false }
        if !names.contains(credentialField) { names.append(credentialField) }
        for name in names {
            let now = request.value(forHTTPHeaderField: name).map { storedValue($0, name: name) }
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

    /// Fields whose members are case-insensitive tokens and whose order carries no meaning (the
    /// preference is in the `q` weights, RFC 9110 §12.4.2, §12.5.3, §12.5.4).
    static let unorderedCaseInsensitiveFields: Set<String> = ["accept-language", "accept-encoding", "accept-charset"]

    /// `value` of the field `name` (lower-case) in the form variants are compared in (§4.1 allows
    /// normalisation): repeated fields are already combined by `URLRequest`; whitespace around
    /// commas goes (`" 1,  2 "` is `1, 2`). For ``unorderedCaseInsensitiveFields`` members are
    /// also lower-cased, stripped of whitespace around `;` and `=`, and sorted, so `en, de`,
    /// `DE,en` and ` de ,  en` select the same variant.
    static func normalize(_ value: String, name: String) -> String {
        let members = value.split(separator: ",").map { HeaderScanning.trim($0) }.filter { !$0.isEmpty }
        guard unorderedCaseInsensitiveFields.contains(name) else { return members.joined(separator: ", ") }
        return
            members
            .map { member in
                member.lowercased().split(separator: ";")
                    .map { $0.split(separator: "=").map { HeaderScanning.trim($0) }.joined(separator: "=") }
                    .joined(separator: ";")
            }
            .sorted()
            .joined(separator: ", ")
    }
}
