/// When a Keychain item can be read and whether it may leave the device: the
/// `kSecAttrAccessible` classes a token store chooses from (`KeychainTokenStore`, Apple
/// platforms). Declared on every platform so that configuration code compiles everywhere.
///
/// Tokens are credentials: the `ThisDeviceOnly` classes keep them out of backups and off other
/// devices. The `AfterFirstUnlock` classes let a refresh run in the background while the device is
/// locked; the `WhenUnlocked` ones fail such a read with `errSecInteractionNotAllowed`
/// (``TokenStoreError/keychain(operation:status:)``).
public enum KeychainAccessibility: Sendable, Hashable {
    /// Readable after the first unlock since boot; never in a backup or on another device
    /// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`). The default.
    case afterFirstUnlockThisDeviceOnly
    /// Readable after the first unlock since boot; restored from encrypted backups onto other
    /// devices (`kSecAttrAccessibleAfterFirstUnlock`).
    case afterFirstUnlock
    /// Readable only while the device is unlocked; never in a backup or on another device
    /// (`kSecAttrAccessibleWhenUnlockedThisDeviceOnly`).
    case whenUnlockedThisDeviceOnly
    /// Readable only while the device is unlocked; restored from encrypted backups
    /// (`kSecAttrAccessibleWhenUnlocked`).
    case whenUnlocked
}
