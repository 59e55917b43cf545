extension DecodingError {
    /// The coding path of the failure formatted by
    /// ``CodingPathFormatter/string(_:)``.
    ///
    /// For `.keyNotFound` the missing key is appended to the context path, so
    /// a missing `name` in the second element of `items` reads
    /// `items[1].name`. Other cases use the context's path as is. Returns
    /// `<root>` for an error at the top level.
    package var codingPathDescription: String {
        CodingPathFormatter.string(fullCodingPath)
    }

    /// A one-line human-readable summary naming the kind of failure, the
    /// formatted path and the decoder's explanation, e.g.
    /// `Key not found at items[1].name: No value associated with key …`.
    ///
    /// Shapes:
    /// - `Type mismatch at <path>: expected <Type>. <description>`
    /// - `Value not found at <path>: expected <Type>. <description>`
    /// - `Key not found at <path>: <description>`
    /// - `Data corrupted at <path>: <description>`
    ///
    /// An underlying error, when present, is appended as
    /// `(underlying: …)`. Line breaks in any part are replaced by spaces.
    package var debugSummary: String {
        let (kind, expectedType, context): (String, Any.Type?, Context?) = {
            switch self {
            case .typeMismatch(let type, let context): return ("Type mismatch", type, context)
            case .valueNotFound(let type, let context): return ("Value not found", type, context)
            case .keyNotFound(_, let context): return ("Key not found", nil, context)
            case .dataCorrupted(let context): return ("Data corrupted", nil, context)
            @unknown default: return ("Decoding failed", nil, nil)
            }
        }()
        var summary = "\(kind) at \(codingPathDescription)"
        var details: [String] = []
        if let expectedType {
            details.append("expected \(expectedType).")
        }
        if let context, !context.debugDescription.isEmpty {
            details.append(context.debugDescription)
        }
        if context == nil {
            details.append(String(describing: self))
        }
        if !details.isEmpty {
            summary += ": " + details.joined(separator: " ")
        }
        if let underlying = context?.underlyingError {
            summary += " (underlying: \(underlying))"
        }
        return Self.singleLine(summary)
    }

    /// The context path, plus the missing key for `.keyNotFound`.
    var fullCodingPath: [any CodingKey] {
        switch self {
        case .keyNotFound(let key, let context): return context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return context.codingPath
        case .dataCorrupted(let context): return context.codingPath
        @unknown default: return []
        }
    }

    private static func singleLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}
