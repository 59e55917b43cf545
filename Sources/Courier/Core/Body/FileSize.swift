import Foundation

/// File sizes in bytes.
package enum FileSize {
    /// The size of the file at `url`, or `nil` when it cannot be read.
    package static func of(_ url: URL) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            attributes[.type] as? FileAttributeType != .typeDirectory
        else { return nil }
        return (attributes[.size] as? NSNumber)?.int64Value
    }
}
