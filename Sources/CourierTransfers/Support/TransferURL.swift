import Foundation

/// Where a transfer goes: the one rule the upload manager, background downloads and tus share.
enum TransferURL {
    /// `path` (which may carry a query) appended to `base`, or `path` itself when it is an
    /// absolute URL; `nil` when the result is no URL.
    static func resolve(_ path: String, against base: URL) -> URL? {
        if let absolute = URL(string: path), absolute.scheme != nil { return absolute }
        var root = base.absoluteString
        while root.hasSuffix("/") { root.removeLast() }
        let trimmed = path.hasPrefix("/") ? String(path.dropFirst()) : path
        return trimmed.isEmpty ? base : URL(string: root + "/" + trimmed)
    }
}
