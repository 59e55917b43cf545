import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads the common shapes of JSON error bodies: `{"error": {"code", "message"}}`,
/// `{"code", "message"}`, `{"error": "invalid_grant", "error_description": …}` (RFC 6749 §5.2),
/// and RFC 9457 problem details (`title`, `detail`).
enum ErrorBodyParser {
    struct Details {
        var code: String?
        var message: String?
    }

    static func parse(_ response: HTTPResponse) -> Details {
        guard let object = jsonObject(response.data) else { return Details() }
        var details = Details()
        if let error = object["error"] as? [String: Any] {
            details.code = error["code"] as? String
            details.message = error["message"] as? String
        } else if let error = object["error"] as? String {
            details.code = error
        }
        details.code = details.code ?? (object["code"] as? String) ?? (object["type"] as? String)
        details.message =
            details.message
            ?? (object["message"] as? String)
            ?? (object["detail"] as? String)
            ?? (object["error_description"] as? String)
            ?? (object["title"] as? String)
        return details
    }

    static func fieldErrors(in body: Data) -> [String: [String]] {
        guard let object = jsonObject(body) else { return [:] }
        let candidates: [Any?] = [
            (object["error"] as? [String: Any])?["fields"], object["fields"], object["errors"],
        ]
        for case let fields as [String: Any] in candidates.compactMap({ $0 }) {
            var result: [String: [String]] = [:]
            for (name, value) in fields {
                if let list = value as? [String] {
                    result[name] = list
                } else if let text = value as? String {
                    result[name] = [text]
                }
            }
            if !result.isEmpty { return result }
        }
        return [:]
    }

    private static func jsonObject(_ body: Data) -> [String: Any]? {
        guard !body.isEmpty, body.count <= 1_048_576 else { return nil }
        return (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
    }
}
