import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
@testable import CourierEnvironments
import CourierTesting

/// Shared declarations for the environment unit tests.
enum EnvironmentFixture {
    static func environment(_ id: String, host: String? = nil) throws -> APIEnvironment {
        try APIEnvironment(id, baseURL: URL(string: "https://\(host ?? id).example.test/v1")!)
    }

    /// development, staging, production (the default mapping's identifiers).
    static func standard() throws -> [APIEnvironment] {
        [try environment("development"), try environment("staging"), try environment("production")]
    }

    /// A fresh temporary folder (removed by the caller's `defer`).
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-env-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func reading(_ channel: BuildChannel) -> BuildChannelReading {
        BuildChannelReading(channel, evidence: "test")
    }

    /// A set over ``standard()`` with the given sources.
    static func set(
        channel: BuildChannel = .testFlight,
        override: EnvironmentOverride? = nil,
        store: any EnvironmentChoiceStore = InMemoryEnvironmentChoiceStore(),
        switching: EnvironmentSwitching = .forbiddenInAppStoreBuilds,
        sessionsOnSwitch: SessionsOnSwitch = .kept
    ) throws -> EnvironmentSet {
        try EnvironmentSet(
            environments: standard(), build: reading(channel), switching: switching,
            sessionsOnSwitch: sessionsOnSwitch, store: store, override: override)
    }
}

/// A one-shot barrier: `wait()` suspends until `open()`.
actor AsyncGate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting.removeAll()
    }
}
