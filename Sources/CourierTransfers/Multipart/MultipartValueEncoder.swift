import Courier
import Foundation

/// The parts a ``MultipartFormEncoder`` collects, in encoding order. Used by one `encode` call on
/// one thread only.
final class MultipartPartSink {
    enum Content {
        case text(String)
        case file(MultipartFile)
    }

    struct Part {
        let name: String
        let content: Content
    }

    var parts: [Part] = []
}

/// The `Encoder` behind ``MultipartFormEncoder``: writes every scalar as a part named by its
/// bracketed path (`user[address][city]`, `tags[]`).
struct MultipartValueEncoder: Encoder {
    let name: String
    let codingPath: [any CodingKey]
    let sink: MultipartPartSink
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(MultipartKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        MultipartUnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        MultipartSingleValueContainer(encoder: self)
    }

    /// The encoder for a member or element named `name`.
    func child(_ name: String, key: any CodingKey) -> MultipartValueEncoder {
        MultipartValueEncoder(name: name, codingPath: codingPath + [key], sink: sink)
    }

    func append(_ text: String) {
        sink.parts.append(MultipartPartSink.Part(name: name, content: .text(text)))
    }

    /// Encodes `value` under this encoder's name: files, dates, URLs and data by Courier's rules,
    /// anything else by its own `encode(to:)`.
    func encodeValue<T: Encodable>(_ value: T) throws {
        switch value {
        case let file as MultipartFile: sink.parts.append(MultipartPartSink.Part(name: name, content: .file(file)))
        case let date as Date:
            guard let text = ISO8601Parsing.string(from: date, fractionalDigits: 0) else {
                throw EncodingError.invalidValue(
                    date, EncodingError.Context(codingPath: codingPath, debugDescription: "Date outside years 0000–9999"))
            }
            append(text)
        case let url as URL: append(url.absoluteString)
        case let data as Data: append(data.base64EncodedString())
        case let decimal as Decimal: append(decimal.description)
        default: try value.encode(to: self)
        }
    }

    func encodeNumber<N: FloatingPoint & LosslessStringConvertible>(_ value: N) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: codingPath, debugDescription: "\(value) cannot be sent in a form"))
        }
        append(value.description)
    }
}

/// An index key for an array element's coding path.
struct MultipartIndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

struct MultipartKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: MultipartValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func child(_ key: Key) -> MultipartValueEncoder {
        let name = encoder.name.isEmpty ? key.stringValue : "\(encoder.name)[\(key.stringValue)]"
        return encoder.child(name, key: key)
    }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: Bool, forKey key: Key) throws { child(key).append(value ? "true" : "false") }
    mutating func encode(_ value: String, forKey key: Key) throws { child(key).append(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try child(key).encodeNumber(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try child(key).encodeNumber(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { child(key).append(String(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { child(key).append(String(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { child(key).append(String(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { child(key).append(String(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { child(key).append(String(value)) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { child(key).append(String(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { child(key).append(String(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { child(key).append(String(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { child(key).append(String(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { child(key).append(String(value)) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try child(key).encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        child(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        child(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { child(key) }
}

struct MultipartUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: MultipartValueEncoder
    private(set) var count = 0
    var codingPath: [any CodingKey] { encoder.codingPath }

    init(encoder: MultipartValueEncoder) {
        self.encoder = encoder
    }

    private mutating func next() -> MultipartValueEncoder {
        defer { count += 1 }
        return encoder.child(encoder.name + "[]", key: MultipartIndexKey(count))
    }

    mutating func encodeNil() throws { count += 1 }
    mutating func encode(_ value: Bool) throws { next().append(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { next().append(value) }
    mutating func encode(_ value: Double) throws { try next().encodeNumber(value) }
    mutating func encode(_ value: Float) throws { try next().encodeNumber(value) }
    mutating func encode(_ value: Int) throws { next().append(String(value)) }
    mutating func encode(_ value: Int8) throws { next().append(String(value)) }
    mutating func encode(_ value: Int16) throws { next().append(String(value)) }
    mutating func encode(_ value: Int32) throws { next().append(String(value)) }
    mutating func encode(_ value: Int64) throws { next().append(String(value)) }
    mutating func encode(_ value: UInt) throws { next().append(String(value)) }
    mutating func encode(_ value: UInt8) throws { next().append(String(value)) }
    mutating func encode(_ value: UInt16) throws { next().append(String(value)) }
    mutating func encode(_ value: UInt32) throws { next().append(String(value)) }
    mutating func encode(_ value: UInt64) throws { next().append(String(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try next().encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { next() }
}

struct MultipartSingleValueContainer: SingleValueEncodingContainer {
    let encoder: MultipartValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws {}
    mutating func encode(_ value: Bool) throws { encoder.append(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { encoder.append(value) }
    mutating func encode(_ value: Double) throws { try encoder.encodeNumber(value) }
    mutating func encode(_ value: Float) throws { try encoder.encodeNumber(value) }
    mutating func encode(_ value: Int) throws { encoder.append(String(value)) }
    mutating func encode(_ value: Int8) throws { encoder.append(String(value)) }
    mutating func encode(_ value: Int16) throws { encoder.append(String(value)) }
    mutating func encode(_ value: Int32) throws { encoder.append(String(value)) }
    mutating func encode(_ value: Int64) throws { encoder.append(String(value)) }
    mutating func encode(_ value: UInt) throws { encoder.append(String(value)) }
    mutating func encode(_ value: UInt8) throws { encoder.append(String(value)) }
    mutating func encode(_ value: UInt16) throws { encoder.append(String(value)) }
    mutating func encode(_ value: UInt32) throws { encoder.append(String(value)) }
    mutating func encode(_ value: UInt64) throws { encoder.append(String(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try encoder.encodeValue(value) }
}
