import Foundation

/// Per-call state of ``URLQueryEncoder/encode(_:)``: the options, the
/// `userInfo` handed to values, and a lazily created date formatter.
///
/// Created fresh for every call and confined to it, so the non-Sendable
/// `DateFormatter` is never shared between threads.
final class QueryEncodingContext {
    let boolEncoding: URLQueryEncoder.BoolEncoding
    let dateEncoding: URLQueryEncoder.DateEncoding
    let userInfo: [CodingUserInfoKey: Any]
    private var formatter: DateFormatter?

    init(encoder: URLQueryEncoder) {
        boolEncoding = encoder.boolEncoding
        dateEncoding = encoder.dateEncoding
        userInfo = encoder.userInfo.mapValues { $0 as Any }
    }

    /// Encodes `value` into a new node at `codingPath`, rendering known
    /// scalar types directly and letting other types encode themselves.
    func box<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> QueryNode {
        let node = QueryNode(codingPath: codingPath)
        if let text = try scalarText(value, codingPath: codingPath) {
            node.setSingleValue(.scalar(text))
        } else {
            try value.encode(to: QueryValueEncoder(node: node, context: self))
        }
        return node
    }

    /// The query text for types rendered as a single scalar, or `nil` for
    /// types that should encode themselves. Exact type checks are used for
    /// `Bool` and floating-point types so no numeric bridging can occur.
    private func scalarText<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> String? {
        if let text = value as? String { return text }
        if T.self == Bool.self, let flag = value as? Bool { return boolText(flag) }
        if T.self == Double.self, let number = value as? Double {
            return try floatText(number, description: "\(number)", codingPath: codingPath)
        }
        if T.self == Float.self, let number = value as? Float {
            return try floatText(Double(number), description: "\(number)", codingPath: codingPath)
        }
        if let integer = value as? any BinaryInteger { return "\(integer)" }
        if let date = value as? Date { return try dateText(date, codingPath: codingPath) }
        if let url = value as? URL { return url.absoluteString }
        if let decimal = value as? Decimal {
            guard !decimal.isNaN else {
                throw EncodingError.invalidValue(
                    decimal, EncodingError.Context(codingPath: codingPath, debugDescription: "NaN has no query form"))
            }
            return decimal.description
        }
        if let data = value as? Data { return data.base64EncodedString() }
        return nil
    }

    private func boolText(_ flag: Bool) -> String {
        switch boolEncoding {
        case .literal: flag ? "true" : "false"
        case .numeric: flag ? "1" : "0"
        }
    }

    private func floatText(_ number: Double, description: String, codingPath: [any CodingKey]) throws -> String {
        guard number.isFinite else {
            throw invalid(number, codingPath, "Cannot encode non-finite number \(number) in a query")
        }
        return description
    }

    private func dateText(_ date: Date, codingPath: [any CodingKey]) throws -> String {
        switch dateEncoding {
        case .iso8601, .iso8601WithFractionalSeconds:
            let digits = if case .iso8601 = dateEncoding { 0 } else { 3 }
            guard let text = ISO8601Parsing.string(from: date, fractionalDigits: digits) else {
                throw invalid(date, codingPath, "Date is outside the RFC 3339 range 0000…9999")
            }
            return text
        case .secondsSince1970:
            let seconds = date.timeIntervalSince1970
            if seconds.rounded() == seconds, let whole = Int64(exactly: seconds) {
                return "\(whole)"
            }
            return try floatText(seconds, description: "\(seconds)", codingPath: codingPath)
        case .millisecondsSince1970:
            let milliseconds = (date.timeIntervalSince1970 * 1_000).rounded()
            guard let whole = Int64(exactly: milliseconds) else {
                throw invalid(date, codingPath, "Date cannot be expressed in whole milliseconds as Int64")
            }
            return "\(whole)"
        case .formatted(let pattern):
            return dateFormatter(pattern: pattern).string(from: date)
        case .custom(let transform):
            return try transform(date)
        }
    }

    private func dateFormatter(pattern: String) -> DateFormatter {
        if let formatter { return formatter }
        let created = DateFormatter()
        created.locale = Locale(identifier: "en_US_POSIX")
        created.calendar = Calendar(identifier: .gregorian)
        created.timeZone = TimeZone(secondsFromGMT: 0)
        created.dateFormat = pattern
        formatter = created
        return created
    }

    private func invalid(_ value: Any, _ codingPath: [any CodingKey], _ message: String) -> EncodingError {
        EncodingError.invalidValue(value, EncodingError.Context(codingPath: codingPath, debugDescription: message))
    }
}
