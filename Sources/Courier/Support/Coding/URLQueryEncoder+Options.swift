import Foundation

extension URLQueryEncoder {
    /// How array properties become query items. Shown for
    /// `ids: [1, 2]`; arrays may contain only scalars (and `nil`s, which are
    /// dropped). An empty array produces no item.
    public enum ArrayEncoding: Sendable, Hashable {
        /// `ids[]=1&ids[]=2` — the PHP / Rails convention.
        case brackets
        /// `ids=1&ids=2` — OpenAPI 3 `style: form, explode: true` (the
        /// default).
        case repeated
        /// One item `ids` with value `1,2` — OpenAPI 3 `style: form,
        /// explode: false`. Note that `PercentEncoding.query(from:)`
        /// renders the comma as `%2C` (RFC 3986 reserves it), which servers
        /// decode back to `,`; a comma inside an element is not escaped
        /// separately, so elements should not contain commas.
        case commaSeparated
    }

    /// How `Bool` values are written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `true` / `false` (the default).
        case literal
        /// `1` / `0`.
        case numeric
    }

    /// How `Date` values are written. All built-in cases use UTC.
    public enum DateEncoding: Sendable {
        /// RFC 3339 / ISO 8601 in UTC to whole seconds (fraction truncated),
        /// e.g. `2026-05-25T22:46:27Z` (the default).
        case iso8601
        /// RFC 3339 / ISO 8601 in UTC with milliseconds (truncated), e.g.
        /// `2026-05-25T22:46:27.580Z`.
        case iso8601WithFractionalSeconds
        /// Seconds since 1970-01-01T00:00:00Z (Unix time). Written as an
        /// integer when whole (`1779749187`), otherwise as a decimal using
        /// Swift's shortest round-tripping form (`1779749187.5`).
        case secondsSince1970
        /// Whole milliseconds since 1970-01-01T00:00:00Z, rounded, e.g.
        /// `1779749187580`.
        case millisecondsSince1970
        /// A Unicode Technical Standard #35 date pattern (as used by
        /// `DateFormatter.dateFormat`), e.g. `"yyyy-MM-dd"`, evaluated with
        /// the `en_US_POSIX` locale, the Gregorian calendar and the UTC time
        /// zone. A formatter is created once per ``URLQueryEncoder/encode(_:)``
        /// call and never shared between calls.
        case formatted(String)
        /// A caller-supplied conversion; errors it throws propagate out of
        /// ``URLQueryEncoder/encode(_:)``.
        case custom(@Sendable (Date) throws -> String)
    }
}
