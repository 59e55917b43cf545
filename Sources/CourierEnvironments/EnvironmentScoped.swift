import Courier
import Foundation

/// One value per environment of a set, made once by `make` the first time it is asked for —
/// a `TokenManager`, an `HTTPCache`, a `SnapshotStore` — so several clients of one
/// environment share it and no two environments ever do.
///
/// ```swift
/// let tokens = EnvironmentScoped { environment in
///     // No transport of its own: it refreshes through its client's (that environment's pins).
///     TokenManager(store: FileTokenStore(directory: support, namespace: environment.storageNamespace),
///                  grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("oauth/token")))
/// }
/// let manager = tokens[environments.current]   // the current environment's manager
/// ```
///
/// A `SnapshotStore` per environment needs one more step: a `snapshotFirst` read saves what its
/// `fetch` returns into the store it started on, while a client following the set sends that
/// fetch to whichever environment is current when it goes out. Restart such reads when the
/// environment changes (``EnvironmentSet/changes()``; in SwiftUI, `.task(id:)` on the current
/// environment's identifier), so that a switch during a read cancels it instead of saving the new
/// environment's data into the old one's store.
public final class EnvironmentScoped<Value: Sendable>: Sendable {
    private let make: @Sendable (APIEnvironment) -> Value
    private let values = Locked<[String: Value]>([:])

    /// Creates the container; `make` runs at most once per environment identifier.
    public init(make: @escaping @Sendable (APIEnvironment) -> Value) {
        self.make = make
    }

    /// The value of `environment`, made on first use.
    public subscript(_ environment: APIEnvironment) -> Value {
        values.withLock { values in
            if let value = values[environment.id] { return value }
            let value = make(environment)
            values[environment.id] = value
            return value
        }
    }

    /// The values made so far, by environment identifier.
    var made: [String: Value] { values.current }
}
