#if canImport(Security)
import Foundation

extension KeychainTokenStore {
    /// A store for one environment's tokens: the item `service` / `courier.tokens.<namespace>`.
    ///
    /// Pass ``APIEnvironment/storageNamespace``, so each environment has its own Keychain item.
    public init(
        service: String, namespace: String, accessGroup: String? = nil,
        accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly
    ) {
        self.init(
            service: service, account: "courier.tokens.\(namespace)", accessGroup: accessGroup, accessibility: accessibility)
    }
}

extension KeychainTokenStore {
    /// The Keychain item: service, account and access group.
    public var storageIdentity: SessionStateIdentity? {
        SessionStateIdentity(
            key: "token-keychain:\(service)|\(account)|\(accessGroup ?? "")",
            label: "the Keychain item \(service)/\(account)")
    }
}
#endif
