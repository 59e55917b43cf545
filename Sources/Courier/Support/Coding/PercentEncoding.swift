import Foundation

/// Deterministic percent-encoding (RFC 3986 §2.1) of URL components.
///
/// Every function works on the UTF-8 encoding of its input, leaves a fixed
/// set of ASCII bytes as they are, and writes every other byte as `%XX` with
/// uppercase hexadecimal digits (RFC 3986 §2.1 recommends uppercase). The
/// output for a given input is always byte-identical. Input is never
/// decoded first: an existing `%` is itself encoded as `%25`.
package enum PercentEncoding {
    /// Encodes a query name or value, leaving only the RFC 3986 §2.3
    /// unreserved characters (`A–Z a–z 0–9 - . _ ~`) unescaped.
    ///
    /// Everything else is escaped, including characters that would be legal
    /// in a query but carry meaning to common parsers: space → `%20`,
    /// `+` → `%2B`, `&` → `%26`, `=` → `%3D`, `#` → `%23`, `/` → `%2F`,
    /// `?` → `%3F`, `[` → `%5B`, `]` → `%5D`, `,` → `%2C`. Non-ASCII text is
    /// escaped byte by byte, e.g. `é` → `%C3%A9`.
    ///
    /// - Parameter component: Unencoded text.
    /// - Returns: Text safe to place on either side of `=` in a query.
    package static func encodeQueryComponent(_ component: String) -> String {
        encode(component, keeping: unreserved)
    }

    /// Encodes one path segment (RFC 3986 §3.3 `segment`).
    ///
    /// Kept unescaped: the unreserved characters (`A–Z a–z 0–9 - . _ ~`)
    /// plus `! $ & ' ( ) * , = : @`. Deliberately escaped although RFC 3986
    /// allows them in a segment: `+` (`%2B`, because some servers decode
    /// paths with form rules and read `+` as a space) and `;` (`%3B`,
    /// because some servers treat it as a path-parameter delimiter). Always
    /// escaped: `/` (`%2F`), `?` (`%3F`), `#` (`%23`), `%` (`%25`), space
    /// (`%20`) and all other bytes. So `a b/c?d#e%f` becomes
    /// `a%20b%2Fc%3Fd%23e%25f`.
    ///
    /// - Parameter segment: Unencoded text of a single segment (it may
    ///   contain `/`, which is escaped rather than treated as a separator).
    /// - Returns: Text safe to place between two `/` in a path.
    package static func encodePathSegment(_ segment: String) -> String {
        encode(segment, keeping: pathSegmentSafe)
    }

    /// Renders query items as a query string (without the leading `?`):
    /// `name=value` pairs joined by `&`, each name and value encoded with
    /// ``encodeQueryComponent(_:)``, in the given order. An item whose
    /// value is `nil` renders as its name alone; an empty value renders as
    /// `name=`.
    ///
    /// - Parameter items: The items, in the order they should appear.
    /// - Returns: For example `email=user%2Btag%40example.com&flag`; the
    ///   empty string for no items.
    package static func query(from items: [URLQueryItem]) -> String {
        items.map { item in
            let name = encodeQueryComponent(item.name)
            guard let value = item.value else { return name }
            return name + "=" + encodeQueryComponent(value)
        }
        .joined(separator: "&")
    }

    // MARK: - Implementation

    private static let unreserved: Set<UInt8> = Set(
        Array(UInt8(ascii: "A")...UInt8(ascii: "Z"))
            + Array(UInt8(ascii: "a")...UInt8(ascii: "z"))
            + Array(UInt8(ascii: "0")...UInt8(ascii: "9"))
            + Array("-._~".utf8)
    )

    private static let pathSegmentSafe: Set<UInt8> = unreserved.union("!$&'()*,=:@".utf8)

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func encode(_ text: String, keeping allowed: Set<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if allowed.contains(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
