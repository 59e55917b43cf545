/// A string- or integer-backed enumeration that stays decodable when a
/// server adds new values: unrecognised raw values decode to a catch-all
/// `unknown(_:)` case and re-encode to exactly the same raw value.
///
/// Conform an enum with an `unknown` case carrying the raw value, list the
/// named cases in `knownCases`, and map each case to its raw value:
///
/// ```swift
/// enum Status: ExtensibleEnum {
///     case active, archived, unknown(String)
///
///     static let knownCases: [Status] = [.active, .archived]
///
///     var rawValue: String {
///         switch self {
///         case .active: "active"
///         case .archived: "archived"
///         case .unknown(let raw): raw
///         }
///     }
/// }
///
/// // {"status":"archived_v2"} decodes to .unknown("archived_v2") and encodes
/// // back to "archived_v2"; {"status":"active"} decodes to .active.
/// ```
///
/// The case `unknown(RawValue)` satisfies the static `unknown(_:)`
/// requirement (SE-0280); `init(rawValue:)`, `init(from:)` and
/// `encode(to:)` are provided. The value is encoded as a single bare
/// `RawValue` (a JSON string or number), matching what a plain
/// `enum Status: String, Codable` would produce.
///
/// Build unknown values with `init(rawValue:)` rather than `.unknown(_:)`
/// directly: `.unknown("active")` is a different value from `.active`,
/// although both encode as `"active"`.
public protocol ExtensibleEnum: RawRepresentable, Codable, Hashable, Sendable
where RawValue: Codable & Hashable & Sendable {
    /// Every case except `unknown`, each with a distinct ``rawValue``.
    /// Consulted in order by ``init(rawValue:)``.
    static var knownCases: [Self] { get }

    /// The catch-all for raw values not produced by any of ``knownCases``.
    /// Normally satisfied by `case unknown(RawValue)`.
    static func unknown(_ rawValue: RawValue) -> Self

    /// The wire value of this case; for `unknown(raw)` it must be `raw`.
    var rawValue: RawValue { get }

    /// Creates the known case whose ``rawValue`` equals `rawValue`, or
    /// `unknown(rawValue)` when there is none. Never fails.
    init(rawValue: RawValue)
}

extension ExtensibleEnum {
    /// Returns the first of ``knownCases`` whose ``rawValue`` equals
    /// `rawValue`, or `unknown(rawValue)`. Never fails.
    public init(rawValue: RawValue) {
        self = Self.knownCases.first { $0.rawValue == rawValue } ?? Self.unknown(rawValue)
    }

    /// Whether this value is one of ``knownCases`` (as opposed to a raw
    /// value this client version does not recognise).
    public var isKnown: Bool {
        Self.knownCases.contains(self)
    }

    /// Decodes a single bare `RawValue` and maps it with ``init(rawValue:)``.
    ///
    /// - Throws: `DecodingError.typeMismatch` or `.valueNotFound` if the
    ///   value is not a `RawValue` (e.g. a number where a string is
    ///   expected, or `null`). Unrecognised values never throw.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(rawValue: try container.decode(RawValue.self))
    }

    /// Encodes ``rawValue`` as a single bare value, so an unknown value is
    /// written back byte-for-byte as it was received.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
