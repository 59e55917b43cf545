import Foundation

/// A token store whose storage two clients must not share: the key that names the storage (two
/// stores with the same key share it) and how to describe it in an error.
protocol ExclusiveTokenStorage {
    /// The storage's key and its description, e.g. `("token-file:/path", "the token file /path")`.
    var exclusivityKey: (key: String, description: String) { get }
}

extension FileTokenStore: ExclusiveTokenStorage {
    var exclusivityKey: (key: String, description: String) {
        let path = fileURL.standardizedFileURL.path
        return ("token-file:\(path)", "the token file \(path)")
    }
}

extension InMemoryTokenStore: ExclusiveTokenStorage {
    var exclusivityKey: (key: String, description: String) {
        ("token-memory:\(ObjectIdentifier(self))", "one InMemoryTokenStore")
    }
}
