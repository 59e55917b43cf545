extension LossyArray: Decodable {
    /// Decodes an array, skipping elements that fail to decode.
    ///
    /// Each skipped element produces a ``LossySkip`` (index, formatted array
    /// path, formatted failure path such as `items[1].name`, one-line
    /// message and the error), appended to ``skipped`` and, if the decoder's
    /// `userInfo` carries a ``LossyDecodingReporter`` under
    /// ``Swift/CodingUserInfoKey/lossyDecodingReporter``, reported to it.
    ///
    /// - Throws: `DecodingError` if the value is not an array (for example
    ///   `DecodingError.typeMismatch` for an object), or if a malformed
    ///   element cannot even be stepped over.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        let reporter = decoder.userInfo[.lossyDecodingReporter] as? LossyDecodingReporter
        var elements: [Element] = []
        var skips: [Skip] = []
        if let count = container.count {
            elements.reserveCapacity(count)
        }
        while !container.isAtEnd {
            let index = container.currentIndex
            do {
                elements.append(try container.decode(Element.self))
            } catch {
                let skip = LossySkip(index: index, arrayCodingPath: container.codingPath, error: error)
                skips.append(skip)
                reporter?.report(skip)
                try Self.stepOver(index: index, in: &container)
            }
        }
        self.init(elements, skipped: skips)
    }

    /// Advances `container` past the element at `index` after a failed
    /// decode. Some decoders (Foundation's `JSONDecoder`) do not advance on
    /// failure; others do, in which case nothing is consumed here.
    private static func stepOver(index: Int, in container: inout any UnkeyedDecodingContainer) throws {
        guard container.currentIndex == index else { return }
        _ = try container.decode(DiscardedElement.self)
        guard container.currentIndex != index else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "Cannot skip malformed element \(index): the decoder did not advance"
            )
        }
    }
}

/// Decodes from any value without reading it; used to step over a
/// malformed array element.
private struct DiscardedElement: Decodable {
    init(from decoder: any Decoder) throws {}
}

extension LossyArray: Encodable where Element: Encodable {
    /// Encodes the elements as a plain array (skip records are not encoded).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

extension KeyedDecodingContainer {
    /// Decodes a ``LossyArray`` property, treating a missing key or an
    /// explicit `null` as an empty array (no skip records).
    ///
    /// Synthesized `Decodable` conformances pick this overload for
    /// `LossyArray` properties (including `@LossyArray` wrapped ones), so a
    /// lossy list never fails its parent merely by being absent.
    ///
    /// - Throws: `DecodingError` if the value is present and not an array.
    public func decode<Element>(
        _ type: LossyArray<Element>.Type,
        forKey key: Key
    ) throws -> LossyArray<Element> {
        try decodeIfPresent(type, forKey: key) ?? LossyArray()
    }
}
