#if canImport(Security)
import Foundation

extension KeychainTokenStore {
    /// A store for one environment's tokens: the item `service` / `courier.tokens.<namespace>`.
    ///
    /// Pass ``ServerEnvironment/storageNamespace``, so each environment has its own Keychain item.
    public init(service: String, namespace: String, accessGroup: String? = nil) {
        self.init(service: service, account: "courier.tokens.\(namespace)", accessGroup: accessGroup)
    }
}

extension KeychainTokenStore: ExclusiveTokenStorage {
    var exclusivityKey: (key: String, description: String) {
        (
            "token-keychain:\(service)|\(account)|\(accessGroup ?? "")",
            "the Keychain item \(service)/\(account)"
        )
    }
}
#endif
