#if canImport(Security)
import Foundation
import Security

/// A ``TokenStore`` in the Keychain (Apple platforms): one generic-password item holding both
/// tokens. By default it is readable after the device's first unlock and never leaves the device
/// (``KeychainAccessibility/afterFirstUnlockThisDeviceOnly``): background refreshes work while the
/// screen is locked, and tokens are in no backup and never restored onto another device. Choose
/// another ``KeychainAccessibility`` with `accessibility:`.
///
/// The item is not synchronised to iCloud Keychain. Pass an `accessGroup` to share the session
/// with an app extension (the group must be in the app's Keychain entitlements).
public struct KeychainTokenStore: TokenStore {
    /// The item's service (`kSecAttrService`), e.g. the app's bundle identifier.
    public let service: String
    /// The item's account (`kSecAttrAccount`); one item per signed-in account name.
    public let account: String
    /// The Keychain access group (`kSecAttrAccessGroup`), or `nil` for the app's default group.
    public let accessGroup: String?
    /// When the item can be read, and whether it may leave the device (`kSecAttrAccessible`).
    public let accessibility: KeychainAccessibility

    /// Creates a store for the item `service`/`account`; every write sets `accessibility` (an
    /// item written by an earlier version with another class is moved to this one).
    public init(
        service: String, account: String = "courier.tokens", accessGroup: String? = nil,
        accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly
    ) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.accessibility = accessibility
    }

    private var itemQuery: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    /// - Throws: ``TokenStoreError/keychain(operation:status:)`` for any status other than
    ///   success or "not found" (for example `errSecInteractionNotAllowed` before first unlock).
    public func read() throws -> AuthTokens? {
        var query = itemQuery
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        switch status {
        case errSecSuccess:
            guard let data = result as? Data else { throw TokenStoreError.corrupted("the Keychain item has no data") }
            return try AuthTokens(storedRepresentation: data)
        case errSecItemNotFound:
            return nil
        default:
            throw TokenStoreError.keychain(operation: "read", status: status)
        }
    }

    /// - Throws: ``TokenStoreError/keychain(operation:status:)`` when the item can be neither
    ///   updated nor added.
    public func write(_ tokens: AuthTokens) throws {
        let attributes: [String: Any] = [
            kSecValueData as String: try tokens.storedRepresentation(),
            kSecAttrAccessible as String: accessibility.securityValue,
        ]
        let status = SecItemUpdate(itemQuery as CFDictionary, attributes as CFDictionary)
        switch status {
        case errSecSuccess:
            return
        case errSecItemNotFound:
            let item = itemQuery.merging(attributes) { _, new in new }
            let added = SecItemAdd(item as CFDictionary, nil)
            guard added == errSecSuccess else { throw TokenStoreError.keychain(operation: "add", status: added) }
        default:
            throw TokenStoreError.keychain(operation: "update", status: status)
        }
    }

    /// - Throws: ``TokenStoreError/keychain(operation:status:)`` for any status other than
    ///   success or "not found".
    public func clear() throws {
        let status = SecItemDelete(itemQuery as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw TokenStoreError.keychain(operation: "delete", status: status)
        }
    }
}
extension KeychainAccessibility {
    /// The `kSecAttrAccessible` value.
    var securityValue: CFString {
        switch self {
        case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
        case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        case .whenUnlocked: kSecAttrAccessibleWhenUnlocked
        }
    }
}
#endif
