import Foundation

/// The path dimension of a ``NetworkMetricsEvent`` for an endpoint without a
/// ``Endpoint/pathTemplate`` (`Request.get("/users/\(id)")`): its path with every segment that
/// looks like an identifier replaced by `{id}`, so that it still aggregates into one series per
/// route and sends no account number, e-mail address or token to a metrics backend. A template
/// the endpoint gives is used as it is.
///
/// A segment is an identifier when, percent-decoded, it contains `@` (an e-mail address), is
/// digits and separators only (`42`, `2026-11`), contains a digit and is at least 8 characters
/// long (a UUID, a hash, an order number, a token), or is at least 24 characters long. Placeholders such as `{id}` and words such as `v2`,
/// `oauth2` or `items` stay. The scheme, host and port of an absolute URL stay as they are.
package enum MetricsPathTemplate {
    /// The placeholder that replaces an identifier segment.
    package static let placeholder = "{id}"

    /// `template` with its identifier segments replaced by ``placeholder``.
    package static func scrubbing(_ template: String) -> String {
        // Most templates have no digit and no `@`: returned without splitting.
        guard
            template.utf8.contains(where: { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "%") || $0.isASCIIDigit })
                || template.utf8.count >= minimumLongSegment
        else { return template }
        let (origin, path) = split(template)
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            isIdentifier(segment) ? Substring(placeholder) : segment
        }
        return origin + segments.joined(separator: "/")
    }

    /// What may stand between the digits of a short identifier (`2026-11`, `4.2`, `12:30`).
    static let separators: Set<UInt8> = [UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":")]

    /// A segment of this many characters or more is an identifier, digits or not.
    static let minimumLongSegment = 24

    /// Whether `segment` is an identifier (see ``MetricsPathTemplate``).
    static func isIdentifier(_ segment: Substring) -> Bool {
        let text = segment.removingPercentEncoding ?? String(segment)
        guard !text.isEmpty, !(text.hasPrefix("{") && text.hasSuffix("}")) else { return false }
        if text.contains("@") || text.count >= minimumLongSegment { return true }
        let digits = text.utf8.filter(\.isASCIIDigit).count
        guard digits > 0 else { return false }
        return text.count >= 8 || text.utf8.allSatisfy { $0.isASCIIDigit || separators.contains($0) }
    }

    /// `scheme://host:port` of an absolute template (empty for a path) and the rest.
    private static func split(_ template: String) -> (origin: String, path: Substring) {
        guard let schemeEnd = template.range(of: "://") else { return ("", Substring(template)) }
        let afterScheme = template[schemeEnd.upperBound...]
        guard let slash = afterScheme.firstIndex(of: "/") else { return (template, "") }
        return (String(template[..<slash]), template[slash...])
    }
}
