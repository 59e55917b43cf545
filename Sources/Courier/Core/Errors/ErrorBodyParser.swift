import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads the common shapes of JSON error bodies: `{"error": {"code", "message"}}`,
/// `{"code", "message"}`, `{"error": "invalid_grant", "error_description": …}` (RFC 6749 §5.2),
/// and RFC 9457 problem details (`title`, `detail`).
///
/// The messages are the server's text, shown to users (``NetworkError/userMessage``, field
/// errors beside a form): each is made displayable first (``displayable(_:)``).
enum ErrorBodyParser {
    /// The longest message kept, in characters (grapheme clusters); a longer one is cut with "…".
    static let messageLimit = 300
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
        let candidates = [
            details.message, object["message"] as? String, object["detail"] as? String,
            object["error_description"] as? String, object["title"] as? String,
        ]
        details.message = candidates.lazy.compactMap { $0.flatMap(displayable) }.first
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
                let texts = (value as? [String]) ?? (value as? String).map { [$0] } ?? []
                let shown = texts.compactMap(displayable)
                if !shown.isEmpty { result[name] = shown }
            }
            if !result.isEmpty { return result }
        }
        return [:]
    }

    /// The Unicode bidirectional formatting characters (UAX #9: embeddings, overrides, isolates,
    /// marks), which can make a message read differently from what it says.
    private static let bidirectionalControls: Set<UInt32> = Set(0x202A...0x202E).union(0x2066...0x2069).union([
        0x200E, 0x200F, 0x061C,
    ])

    /// `text` as a line an alert can show: control characters and bidirectional formatting
    /// characters are removed, runs of whitespace (line breaks included) become one space, and it is cut to
    /// ``messageLimit`` characters with "…"; nil when nothing is left.
    static func displayable(_ text: String) -> String? {
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !scalars.isEmpty
                continue
            }
            if scalar.properties.generalCategory == .control || Self.bidirectionalControls.contains(scalar.value) { continue }
            if pendingSpace { scalars.append(" ") }
            pendingSpace = false
            scalars.append(scalar)
        }
        let line = String(scalars)
        guard !line.isEmpty else { return nil }
        guard line.count > messageLimit else { return line }
        return String(line.prefix(messageLimit - 1)).trimmingCharacters(in: .whitespaces) + "…"
    }

    private static func jsonObject(_ body: Data) -> [String: Any]? {
        guard !body.isEmpty, body.count <= 1_048_576 else { return nil }
        return (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
    }
}
