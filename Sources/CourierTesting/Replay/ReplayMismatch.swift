import Foundation
import Courier

/// Thrown by ``ReplayTransport`` for a request no recorded entry matches; its ``description`` is
/// a readable diff against the closest recorded request, field by field.
///
/// ```text
/// ReplayTransport: no recorded response matches POST /orders?page=2 (body sha256:9f2c01…)
/// closest: #1 POST /orders?page=1 → 201
///   method  same     POST
///   path    same     /orders
///   query   differs  recorded page=1
///                    request  page=2
///   body    same     sha256:9f2c01…
/// ```
public struct ReplayMismatch: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request that found no entry, as `METHOD path?query`, redacted.
    public var request: String
    /// The closest recorded entry; `nil` when the fixture has none.
    public var closest: ReplayEntry?
    /// The diff: the request, the closest entry and each field compared.
    public var description: String
}

/// Writes the text of a ``ReplayMismatch``.
enum ReplayDiff {
    /// A digest shortened for display: `sha256:` and 12 hex digits.
    static func short(_ digest: String) -> String {
        digest.count > 19 ? String(digest.prefix(19)) + "…" : digest
    }

    static func text(
        key: ReplayRequestKey, closest: ReplayEntry?, comparison: ReplayMatcher.Comparison?, note: String?
    ) -> String {
        var lines = ["ReplayTransport: no recorded response matches \(key.summary)"]
        guard let closest, let comparison else {
            lines.append("the fixture has no entries")
            return lines.joined(separator: "\n")
        }
        lines.append("closest: \(closest)")
        func field(_ name: String, _ same: Bool, recorded: String, request: String) {
            let label = name.padding(toLength: 8, withPad: " ", startingAt: 0)
            if same {
                lines.append("  \(label)same     \(recorded)")
            } else {
                lines.append("  \(label)differs  recorded \(recorded)")
                lines.append("                   request  \(request)")
            }
        }
        field("method", comparison.method, recorded: closest.method, request: key.method)
        field("path", comparison.path, recorded: closest.pathTemplate ?? closest.path, request: key.path)
        field(
            "query", comparison.query, recorded: show(ReplayEntry.queryText(closest.queryItems)),
            request: show(ReplayEntry.queryText(key.queryItems)))
        field(
            "body", comparison.body, recorded: closest.bodyDigest.map(short) ?? "(none)",
            request: key.bodyDigest.map(short) ?? "(none)")
        if !comparison.body {
            if let recorded = closest.bodyText { lines.append("  recorded body: \(recorded.prefix(300))") }
            if let sent = key.bodyText { lines.append("  request body:  \(sent.prefix(300))") }
        }
        if let note { lines.append(note) }
        return lines.joined(separator: "\n")
    }

    private static func show(_ text: String) -> String { text.isEmpty ? "(none)" : text }
}
