import Foundation

/// Turns an `Encodable` model into header fields: one field per non-nil property, named by its
/// coding key (the property name, or the `CodingKeys` raw value), in encoding order.
///
/// Values: `String`, `Bool` (`true`/`false`), integers, finite floating-point numbers, `Decimal`,
/// `URL` (absolute string), `UUID` (upper-case string), `Date` (IMF-fixdate, RFC 9110 §5.6.7) and
/// anything that encodes itself as one of those (a `RawRepresentable` enum). `nil` properties
/// produce no field. Nested objects and arrays are refused, and so is any value with CR, LF,
/// another control character, non-ASCII text or surrounding whitespace (see
/// ``HeaderFieldError/Problem``) — so a value from user input can never inject a field.
struct HeaderModelEncoder {
    /// - Throws: ``HeaderFieldError``.
    func encode(_ model: some Encodable) throws -> HTTPHeaders {
        let encoder = HeaderFieldsEncoder(modelType: "\(type(of: model))")
        do {
            try model.encode(to: encoder)
        } catch let error as HeaderFieldError {
            throw encoder.state.failure ?? error
        }
        let state = encoder.state
        if let failure = state.failure { throw failure }
        guard state.usedKeyedContainer else { throw HeaderFieldError.notAModel(type: "\(type(of: model))") }
        var headers = HTTPHeaders()
        var seen = Set<String>()
        for (name, value) in state.fields {
            guard seen.insert(name.lowercased()).inserted else { throw HeaderFieldError.duplicateField(name) }
            headers.add(name, value)
        }
        return headers
    }
}

/// The `Encoder` behind ``HeaderModelEncoder``: a top-level keyed container of text values.
final class HeaderFieldsEncoder: Encoder {
    struct State {
        var fields: [(String, String)] = []
        var failure: HeaderFieldError?
        var usedKeyedContainer = false
    }

    let codingPath: [any CodingKey] = []
    let userInfo: [CodingUserInfoKey: Any] = [:]
    let modelType: String
    var state = State()

    init(modelType: String) {
        self.modelType = modelType
    }

    /// Records the first failure; the containers cannot throw from the methods that hit it.
    func fail(_ error: HeaderFieldError) {
        if state.failure == nil { state.failure = error }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        state.usedKeyedContainer = true
        return KeyedEncodingContainer(HeaderKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        fail(.notAModel(type: modelType))
        return RefusingUnkeyedContainer(error: .notAModel(type: modelType))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        fail(.notAModel(type: modelType))
        return ScalarCapture(field: modelType, onRefuse: { [weak self] in self?.fail($0) })
    }
}

/// The model's properties, one header field each.
struct HeaderKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: HeaderFieldsEncoder
    var codingPath: [any CodingKey] { [] }

    private func add(_ value: String, for key: Key) throws {
        try HeaderFieldRules.validate(name: key.stringValue)
        try HeaderFieldRules.validate(value: value, field: key.stringValue)
        encoder.state.fields.append((key.stringValue, value))
    }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: Bool, forKey key: Key) throws { try add(value ? "true" : "false", for: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try add(value, for: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try add(try HeaderScalar.text(value, field: key.stringValue), for: key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try add(try HeaderScalar.text(Double(value), field: key.stringValue), for: key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { try add(String(value), for: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try add(String(value), for: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try add(String(value), for: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try add(String(value), for: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try add(String(value), for: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try add(String(value), for: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try add(String(value), for: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try add(String(value), for: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try add(String(value), for: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try add(String(value), for: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let field = key.stringValue
        if let text = try HeaderScalar.knownText(value, field: field) {
            try add(text, for: key)
            return
        }
        let capture = ScalarCapture(field: field, onRefuse: { _ in })
        try value.encode(to: capture)
        if let refusal = capture.box.refusal { throw refusal }
        switch capture.box.value {
        case .some(.some(let text)): try add(text, for: key)
        case .some(.none): return  // encoded nil: no field
        case .none: throw HeaderFieldError.unsupportedValue(field: field, type: "\(T.self)")
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        encoder.fail(.unsupportedValue(field: key.stringValue, type: "nested object"))
        return KeyedEncodingContainer(
            RefusingKeyedContainer<NestedKey>(error: .unsupportedValue(field: key.stringValue, type: "nested object")))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.fail(.unsupportedValue(field: key.stringValue, type: "array"))
        return RefusingUnkeyedContainer(error: .unsupportedValue(field: key.stringValue, type: "array"))
    }

    mutating func superEncoder() -> any Encoder {
        encoder.fail(.unsupportedValue(field: "super", type: "superclass encoding"))
        return ScalarCapture(field: "super", onRefuse: { _ in })
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoder.fail(.unsupportedValue(field: key.stringValue, type: "superclass encoding"))
        return ScalarCapture(field: key.stringValue, onRefuse: { _ in })
    }
}

/// Text forms of the value types header fields commonly carry.
enum HeaderScalar {
    /// The text of `value` when its type has a fixed header form, else `nil`.
    static func knownText<T>(_ value: T, field: String) throws -> String? {
        switch value {
        case let url as URL: return url.absoluteString
        case let uuid as UUID: return uuid.uuidString
        case let date as Date: return HTTPDate.string(from: date)
        case let decimal as Decimal: return decimal.description
        default: return nil
        }
    }

    /// A finite number's shortest round-tripping text; NaN and infinity are refused.
    static func text(_ value: Double, field: String) throws -> String {
        guard value.isFinite else { throw HeaderFieldError.unsupportedValue(field: field, type: "non-finite number") }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

/// An `Encoder` capturing one scalar (for values that encode themselves through a single-value
/// container, such as `RawRepresentable` enums and `Optional`). Anything else is refused.
final class ScalarCapture: Encoder, SingleValueEncodingContainer {
    /// `nil` = nothing encoded; `.some(nil)` = encoded nil; `.some(text)` = the text.
    final class Box {
        var value: String??
        var refusal: HeaderFieldError?
    }

    let field: String
    let box = Box()
    let onRefuse: (HeaderFieldError) -> Void
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(field: String, onRefuse: @escaping (HeaderFieldError) -> Void) {
        self.field = field
        self.onRefuse = onRefuse
    }

    private func refuse(_ type: String) -> HeaderFieldError {
        let error = HeaderFieldError.unsupportedValue(field: field, type: type)
        if box.refusal == nil { box.refusal = error }
        onRefuse(error)
        return error
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RefusingKeyedContainer<Key>(error: refuse("nested object")))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        RefusingUnkeyedContainer(error: refuse("array"))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    private func set(_ text: String) { box.value = .some(text) }

    func encodeNil() throws { box.value = .some(nil) }
    func encode(_ value: Bool) throws { set(value ? "true" : "false") }
    func encode(_ value: String) throws { set(value) }
    func encode(_ value: Double) throws { set(try HeaderScalar.text(value, field: field)) }
    func encode(_ value: Float) throws { set(try HeaderScalar.text(Double(value), field: field)) }
    func encode(_ value: Int) throws { set(String(value)) }
    func encode(_ value: Int8) throws { set(String(value)) }
    func encode(_ value: Int16) throws { set(String(value)) }
    func encode(_ value: Int32) throws { set(String(value)) }
    func encode(_ value: Int64) throws { set(String(value)) }
    func encode(_ value: UInt) throws { set(String(value)) }
    func encode(_ value: UInt8) throws { set(String(value)) }
    func encode(_ value: UInt16) throws { set(String(value)) }
    func encode(_ value: UInt32) throws { set(String(value)) }
    func encode(_ value: UInt64) throws { set(String(value)) }

    func encode<T: Encodable>(_ value: T) throws {
        if let text = try HeaderScalar.knownText(value, field: field) {
            set(text)
        } else {
            try value.encode(to: self)
        }
    }
}

/// A keyed container that refuses everything (for nested objects, which headers cannot carry).
struct RefusingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let error: HeaderFieldError
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { throw error }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw error }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(RefusingKeyedContainer<NestedKey>(error: error))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        RefusingUnkeyedContainer(error: error)
    }
    mutating func superEncoder() -> any Encoder { ScalarCapture(field: "super", onRefuse: { _ in }) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { ScalarCapture(field: key.stringValue, onRefuse: { _ in }) }
}

/// An unkeyed container that refuses everything (arrays are not header values).
struct RefusingUnkeyedContainer: UnkeyedEncodingContainer {
    let error: HeaderFieldError
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }

    mutating func encodeNil() throws { throw error }
    mutating func encode<T: Encodable>(_ value: T) throws { throw error }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(RefusingKeyedContainer<NestedKey>(error: error))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { RefusingUnkeyedContainer(error: error) }
    mutating func superEncoder() -> any Encoder { ScalarCapture(field: "super", onRefuse: { _ in }) }
}
