/// An array that decodes leniently: elements that fail to decode are skipped
/// and recorded instead of failing the whole value.
///
/// Use it as a property wrapper or directly as a property or response type:
///
/// ```swift
/// struct Page: Decodable {
///     @LossyArray var items: [Item]      // $items.skipped lists the skips
///     let tags: LossyArray<Tag>          // tags.skipped.count, for tag in tags
/// }
/// let all = try JSONDecoder().decode(LossyArray<Item>.self, from: data)
/// ```
///
/// Decoding (see ``init(from:)``): the value must be an array; each element
/// that throws while decoding is skipped and described by a ``LossySkip``
/// in ``skipped``; the remaining elements keep their order. When the
/// decoder's `userInfo` holds a ``LossyDecodingReporter`` under
/// ``Swift/CodingUserInfoKey/lossyDecodingReporter``, each skip is also
/// reported there. As a keyed property, a missing key or `null` decodes as an
/// empty array (see `KeyedDecodingContainer.decode(_:forKey:)` below).
///
/// Strict decoding remains the default: a plain `[Element]` still fails on
/// the first bad element.
///
/// Encoding writes the surviving elements as a plain array. Equality and
/// hashing consider only the elements, not the skip records, because skips
/// are diagnostics rather than part of the value.
@propertyWrapper
public struct LossyArray<Element: Decodable> {
    /// The record type for a skipped element.
    public typealias Skip = LossySkip

    /// The successfully decoded elements, in source order.
    public var wrappedValue: [Element]

    /// One record per skipped element, in source order. Empty when the value
    /// was created in code or every element decoded.
    public internal(set) var skipped: [Skip]

    /// Number of skipped elements; equals `skipped.count`.
    package var skippedCount: Int { skipped.count }

    /// The wrapper itself, so `$property.skipped` reaches the skip records.
    public var projectedValue: LossyArray<Element> {
        get { self }
        set { self = newValue }
    }

    /// Wraps `wrappedValue` with no skip records (property-wrapper form).
    public init(wrappedValue: [Element]) {
        self.init(wrappedValue, skipped: [])
    }

    /// Creates a value from elements and, optionally, skip records.
    ///
    /// - Parameters:
    ///   - elements: The elements, in order.
    ///   - skipped: Skip records to carry; empty by default.
    public init(_ elements: [Element], skipped: [Skip] = []) {
        wrappedValue = elements
        self.skipped = skipped
    }

    /// Creates an empty value with no skip records.
    public init() {
        self.init([])
    }
}

extension LossyArray: Sendable where Element: Sendable {}

extension LossyArray: Equatable where Element: Equatable {
    /// Two values are equal when their elements are equal; skip records are
    /// ignored.
    public static func == (lhs: LossyArray, rhs: LossyArray) -> Bool {
        lhs.wrappedValue == rhs.wrappedValue
    }
}

extension LossyArray: Hashable where Element: Hashable {
    /// Hashes the elements only, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(wrappedValue)
    }
}

extension LossyArray: ExpressibleByArrayLiteral {
    /// Creates a value from an array literal, with no skip records.
    public init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}

extension LossyArray: RandomAccessCollection {
    /// Index of the first element (always 0).
    public var startIndex: Int { wrappedValue.startIndex }
    /// One past the last element's index.
    public var endIndex: Int { wrappedValue.endIndex }
    /// The element at `position`; `position` must be a valid index.
    public subscript(position: Int) -> Element { wrappedValue[position] }
}
