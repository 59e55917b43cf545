import Foundation

/// The identifier of one logical call, sent as `X-Request-ID` and written to every log line,
/// record and metrics event of that call so they can be joined with the server's logs.
///
/// A random (version 4) UUID by default. Its text form (``description``) is the lower-case UUID
/// string, e.g. `3f0c2a4e-8b1d-4c55-9a0e-2f6d1b7c9e10`.
public struct RequestID: Sendable, Hashable, CustomStringConvertible {
    /// The underlying UUID.
    public let uuid: UUID
    /// The lower-case UUID string, as sent in `X-Request-ID`.
    public let description: String

    /// A fresh random request ID.
    public init() { self.init(UUID.random()) }

    /// Wraps `uuid`.
    public init(_ uuid: UUID) {
        self.uuid = uuid
        self.description = Self.lowercaseString(of: uuid)
    }

    /// `uuid.uuidString.lowercased()`, written straight from the 16 bytes: one allocation instead
    /// of two strings and a case mapping, once per call.
    static func lowercaseString(of uuid: UUID) -> String {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { buffer in
                let digits: StaticString = "0123456789abcdef"
                var count = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        buffer[count] = UInt8(ascii: "-")
                        count += 1
                    }
                    buffer[count] = digits.utf8Start[Int(byte >> 4)]
                    buffer[count + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    count += 2
                }
                return count
            }
        }
    }
}
