import Courier
import Foundation

/// Where the environment chosen at run time (a debug menu's switch) is remembered between
/// launches. It holds an environment identifier, nothing secret.
///
/// Implementations: ``UserDefaultsEnvironmentChoiceStore`` (Apple apps),
/// ``FileEnvironmentChoiceStore`` (Linux, servers, tests) and `InMemoryEnvironmentChoiceStore`
/// (previews, tests, apps that must not remember). `platformDefault` picks one.
public protocol EnvironmentChoiceStore: Sendable {
    /// The saved identifier, or `nil` when none was saved.
    /// - Throws: `EnvironmentError.storeFailed(operation:reason:)` when the storage cannot be read
    ///   or holds something that is not an identifier.
    func load() throws -> String?
    /// Saves `environmentID`, replacing the previous choice.
    /// - Throws: `EnvironmentError.storeFailed(operation:reason:)`; the previous choice is kept.
    func save(_ environmentID: String) throws
    /// Forgets the saved choice; succeeds when there was none.
    /// - Throws: `EnvironmentError.storeFailed(operation:reason:)`.
    func clear() throws
}

/// The store for this platform.
public enum EnvironmentChoiceStores {
    /// ``UserDefaultsEnvironmentChoiceStore`` on Apple platforms; on others a
    /// ``FileEnvironmentChoiceStore`` at `~/.config/<appName>/environment` (or
    /// `$XDG_CONFIG_HOME/<appName>/environment`).
    ///
    /// - Parameter appName: A folder name for the file store (ignored on Apple platforms), e.g. the
    ///   bundle identifier.
    public static func platformDefault(appName: String) -> any EnvironmentChoiceStore {
        EnvironmentPlatform.environmentChoiceStore(appName)
    }

    /// The ``FileEnvironmentChoiceStore`` at `$XDG_CONFIG_HOME/<appName>/environment`, or
    /// `~/.config/<appName>/environment` when the variable is unset or empty.
    static func configFileStore(appName: String) -> FileEnvironmentChoiceStore {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config")
        return FileEnvironmentChoiceStore(
            fileURL: base.appendingPathComponent(appName).appendingPathComponent("environment"))
    }
}

/// An ``EnvironmentChoiceStore`` in one small text file holding the identifier (Linux, servers,
/// tests). The file is replaced atomically (write to a temporary file, then rename), so a crash
/// leaves the old choice or the new one; missing folders are created. Like every file Courier
/// writes, the file is its owner's alone (mode 0600) and a folder it creates 0700.
public struct FileEnvironmentChoiceStore: EnvironmentChoiceStore {
    /// The file holding the identifier.
    package let fileURL: URL

    /// Largest file accepted, in bytes; anything longer is not a choice this store wrote.
    static let maximumSize = 256

    /// Creates a store for the file at `fileURL` (it need not exist yet).
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// - Throws: `EnvironmentError.storeFailed(operation:reason:)` when the file exists but
    ///   cannot be read, is larger than 256 bytes, or does not hold a valid identifier.
    public func load() throws -> String? {
        let data: Data
        do {
            data = try Data(contentsOf: fileURL)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch {
            if !FileManager.default.fileExists(atPath: fileURL.path) { return nil }
            throw EnvironmentError.storeFailed(operation: "load", reason: "\(fileURL.path): \(error.localizedDescription)")
        }
        guard data.count <= Self.maximumSize, let text = String(data: data, encoding: .utf8) else {
            throw EnvironmentError.storeFailed(operation: "load", reason: "\(fileURL.path) is not an environment choice")
        }
        return try EnvironmentError.checkLoaded(text.trimmingCharacters(in: .whitespacesAndNewlines), from: fileURL.path)
    }

    /// - Throws: `EnvironmentError.storeFailed(operation:reason:)` when `environmentID` is not a
    ///   valid identifier or the file cannot be written (the previous file is then untouched).
    public func save(_ environmentID: String) throws {
        try EnvironmentError.checkSavable(environmentID)
        do {
            try AtomicFile.write(Data((environmentID + "\n").utf8), to: fileURL)
        } catch {
            throw EnvironmentError.storeFailed(operation: "save", reason: "\(fileURL.path): \(error.localizedDescription)")
        }
    }

    /// - Throws: `EnvironmentError.storeFailed(operation:reason:)` when the file exists and cannot
    ///   be removed.
    public func clear() throws {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return }
        do {
            try FileManager.default.removeItem(at: fileURL)
        } catch {
            if !FileManager.default.fileExists(atPath: fileURL.path) { return }
            throw EnvironmentError.storeFailed(operation: "clear", reason: "\(fileURL.path): \(error.localizedDescription)")
        }
    }
}

/// An ``EnvironmentChoiceStore`` in memory: forgets the choice when the process ends.
package final class InMemoryEnvironmentChoiceStore: EnvironmentChoiceStore {
    private let saved: Locked<String?>

    /// Creates a store, optionally holding a choice already.
    package init(_ environmentID: String? = nil) {
        saved = Locked(environmentID)
    }

    package func load() throws -> String? { saved.current }
    package func save(_ environmentID: String) throws { saved.set(environmentID) }
    package func clear() throws { saved.set(nil) }
}

// The identifier checks every store makes on what it reads and writes.
extension EnvironmentError {
    /// `id` when it is a valid identifier (``APIEnvironment/isValid(identifier:)``).
    ///
    /// - Parameter storage: Names where `id` was read, e.g. a file's path, for the error.
    /// - Throws: `storeFailed(operation: "load", …)` when `id` is `nil` or not a valid identifier.
    static func checkLoaded(_ id: String?, from storage: @autoclosure () -> String) throws -> String {
        guard let id, APIEnvironment.isValid(identifier: id) else {
            throw EnvironmentError.storeFailed(
                operation: "load", reason: "\(storage()) does not hold an environment identifier")
        }
        return id
    }

    /// - Throws: `storeFailed(operation: "save", …)` when `environmentID` is not a valid identifier.
    static func checkSavable(_ environmentID: String) throws {
        guard APIEnvironment.isValid(identifier: environmentID) else {
            throw EnvironmentError.storeFailed(
                operation: "save", reason: "\(environmentID.debugDescription) is not an environment identifier")
        }
    }
}
