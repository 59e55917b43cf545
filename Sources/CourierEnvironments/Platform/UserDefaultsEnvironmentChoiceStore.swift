import Courier
import Foundation

/// An ``EnvironmentChoiceStore`` in `UserDefaults` — the store for Apple apps (the choice is not a
/// secret; tokens never go here).
///
/// Each call opens the suite by name instead of keeping a `UserDefaults` object, so the store is
/// a plain `Sendable` value. The key holds the identifier as a string.
public struct UserDefaultsEnvironmentChoiceStore: EnvironmentChoiceStore {
    /// The defaults key; `courier.environment` by default.
    public let key: String
    /// The suite (`UserDefaults(suiteName:)`, e.g. an app group shared with an extension), or `nil`
    /// for `UserDefaults.standard`.
    public let suiteName: String?

    /// Creates a store for `key` in the standard defaults or in `suiteName`.
    public init(key: String = "courier.environment", suiteName: String? = nil) {
        self.key = key
        self.suiteName = suiteName
    }

    private func defaults() throws -> UserDefaults {
        guard let suiteName else { return .standard }
        guard let defaults = UserDefaults(suiteName: suiteName) else {
            throw EnvironmentError.storeFailed(operation: "open", reason: "UserDefaults suite '\(suiteName)' is unavailable")
        }
        return defaults
    }

    /// - Throws: `EnvironmentError.storeFailed(operation:reason:)` when the suite cannot be
    ///   opened or the key holds something other than an identifier.
    public func load() throws -> String? {
        guard let value = try defaults().object(forKey: key) else { return nil }
        return try EnvironmentError.checkLoaded(value as? String, from: "UserDefaults key '\(key)'")
    }

    /// - Throws: `EnvironmentError.storeFailed(operation:reason:)` for an invalid identifier or
    ///   a suite that cannot be opened.
    public func save(_ environmentID: String) throws {
        try EnvironmentError.checkSavable(environmentID)
        try defaults().set(environmentID, forKey: key)
    }

    /// - Throws: `EnvironmentError.storeFailed(operation:reason:)` when the suite cannot be opened.
    public func clear() throws {
        try defaults().removeObject(forKey: key)
    }
}
