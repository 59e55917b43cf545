import Foundation

extension APIEnvironment {
    /// Accepts 1...64 ASCII letters, digits, `.`, `_`, `-` (not `.` or `..` alone: they are file names).
    package static func validate(identifier: String) throws {
        guard isValid(identifier: identifier) else { throw EnvironmentError.invalidIdentifier(identifier) }
    }

    package static func isValid(identifier: String) -> Bool {
        let bytes = Array(identifier.utf8)
        guard (1...64).contains(bytes.count), identifier != ".", identifier != ".." else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }
}
