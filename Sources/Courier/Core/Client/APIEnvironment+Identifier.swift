import Foundation

extension APIEnvironment {
    /// Accepts 1...64 ASCII letters, digits, `.`, `_`, `-` (not `.` or `..` alone: they are file names).
    package static func validate(identifier: String) throws {
        guard isValid(identifier: identifier) else { throw EnvironmentError.invalidIdentifier(identifier) }
    }

    package static func isValid(identifier: String) -> Bool {
        let bytes = Array(identifier.utf8)
        guard (1...64).contains(bytes.count), identifier != ".", identifier != ".." else { return false }
        return bytes.allSatisfy { $0.isASCIIAlphanumeric || "._-".utf8.contains($0) }
    }
}
