/// A record of one array element that lossy decoding skipped because it
/// could not be decoded.
///
/// Produced by ``LossyArray`` (available as ``LossyArray/skipped``) and
/// delivered to a ``LossyDecodingReporter`` when one is installed.
///
/// Equality compares ``index``, ``arrayPath``, ``codingPath`` and
/// ``message``; the underlying ``error`` value is not compared.
public struct LossySkip: Sendable, Equatable, CustomStringConvertible {
    /// Zero-based position of the skipped element in the source array.
    public let index: Int
    /// Formatted coding path of the array itself, e.g. `items`
    /// (`<root>` for a top-level array). See `CodingPathFormatter`.
    public let arrayPath: String
    /// Formatted coding path where decoding failed, e.g. `items[1].name`
    /// for a missing `name` key in element 1.
    public let codingPath: String
    /// One-line explanation; `DecodingError.debugSummary` for
    /// decoding errors, the error's description otherwise.
    public let message: String
    /// The error thrown while decoding the element.
    public let error: any Error

    /// Creates a skip record. Normally produced by ``LossyArray``.
    ///
    /// - Parameters:
    ///   - index: Zero-based element position in the array.
    ///   - arrayPath: Formatted path of the array.
    ///   - codingPath: Formatted path of the failure.
    ///   - message: One-line explanation.
    ///   - error: The underlying error.
    package init(index: Int, arrayPath: String, codingPath: String, message: String, error: any Error) {
        self.index = index
        self.arrayPath = arrayPath
        self.codingPath = codingPath
        self.message = message
        self.error = error
    }

    /// Builds a record for element `index` of the array at `arrayCodingPath`
    /// that failed with `error`.
    init(index: Int, arrayCodingPath: [any CodingKey], error: any Error) {
        let failurePath: String
        let message: String
        if let decodingError = error as? DecodingError {
            failurePath = decodingError.codingPathDescription
            message = decodingError.debugSummary
        } else {
            failurePath = CodingPathFormatter.string(arrayCodingPath + [ArrayIndexKey(index)])
            message = String(describing: error)
        }
        self.init(
            index: index,
            arrayPath: CodingPathFormatter.string(arrayCodingPath),
            codingPath: failurePath,
            message: message,
            error: error
        )
    }

    /// `Skipped element <index> of <arrayPath>: <message>`.
    public var description: String {
        "Skipped element \(index) of \(arrayPath): \(message)"
    }

    /// Compares index, paths and message; the underlying `error` is not
    /// compared (errors are not generally `Equatable`).
    public static func == (lhs: LossySkip, rhs: LossySkip) -> Bool {
        lhs.index == rhs.index && lhs.arrayPath == rhs.arrayPath
            && lhs.codingPath == rhs.codingPath && lhs.message == rhs.message
    }
}

/// A coding key for an array position, used to format paths.
struct ArrayIndexKey: CodingKey {
    let intValue: Int?
    let stringValue: String

    init(_ index: Int) {
        intValue = index
        stringValue = "Index \(index)"
    }

    init?(intValue: Int) {
        self.init(intValue)
    }

    init?(stringValue: String) {
        return nil
    }
}
