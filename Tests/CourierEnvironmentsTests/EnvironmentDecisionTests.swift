import Foundation
import Testing
@testable import Courier
@testable import CourierEnvironments

@Suite("Environment decision: override > persisted > build")
struct EnvironmentDecisionTests {
    typealias F = EnvironmentFixture

    @Test("every source present: the override decides, and it says so")
    func overrideWins() throws {
        let set = try F.set(
            channel: .testFlight,
            override: EnvironmentOverride(environmentID: "development", origin: .environmentVariable),
            store: InMemoryEnvironmentChoiceStore("production"))
        #expect(set.current.id == "development")
        #expect(set.decision.source == .override(EnvironmentOverride(environmentID: "development", origin: .environmentVariable)))
        #expect(
            set.decision.description.hasPrefix(
                "development — chosen by environment variable COURIER_ENV=development; build: TestFlight build"))
    }

    @Test("no override: the persisted choice decides over the build")
    func persistedBeatsBuild() throws {
        let set = try F.set(channel: .debug, store: InMemoryEnvironmentChoiceStore("production"))
        #expect(set.current.id == "production")
        #expect(set.decision.source == .persisted)
        #expect(set.decision.notes.isEmpty)
    }

    @Test(
        "no override, nothing persisted: the build decides, per channel",
        arguments: [
            (BuildChannel.debug, "development"), (.xcode, "staging"), (.testFlight, "staging"),
            (.appStore, "production"), (.unknown, "production"),
        ])
    func buildDecides(channel: BuildChannel, expected: String) throws {
        let set = try F.set(channel: channel)
        #expect(set.current.id == expected)
        #expect(set.decision.source == .build)
        #expect(set.decision.build.channel == channel)
    }

    @Test("the launch argument wins over the environment variable; empty values count as absent")
    func overrideSources() {
        let both = EnvironmentOverride.fromProcess(
            arguments: ["/app", "-COURIER_ENV", "staging"], environment: ["COURIER_ENV": "production"])
        #expect(both == EnvironmentOverride(environmentID: "staging", origin: .launchArgument))
        let variable = EnvironmentOverride.fromProcess(arguments: ["/app"], environment: ["COURIER_ENV": "production"])
        #expect(variable == EnvironmentOverride(environmentID: "production", origin: .environmentVariable))
        #expect(EnvironmentOverride.fromProcess(arguments: ["/app"], environment: ["COURIER_ENV": "  "]) == nil)
        #expect(EnvironmentOverride.fromProcess(arguments: ["/app", "-COURIER_ENV"], environment: [:]) == nil)
        #expect(EnvironmentOverride.fromProcess(arguments: ["/app"], environment: [:]) == nil)
    }

    @Test("an override naming an unknown environment is a typed error, not a silent fallback")
    func unknownOverride() throws {
        #expect(throws: EnvironmentError.unknownEnvironment("stagign", known: ["development", "staging", "production"])) {
            try F.set(override: EnvironmentOverride(environmentID: "stagign", origin: .launchArgument))
        }
    }

    @Test("a persisted choice the set no longer has is skipped and noted; the build decides")
    func stalePersistedChoice() throws {
        let set = try F.set(channel: .xcode, store: InMemoryEnvironmentChoiceStore("qa"))
        #expect(set.current.id == "staging")
        #expect(set.decision.source == .build)
        #expect(set.decision.notes == ["persisted choice 'qa' ignored: no such environment"])
    }

    @Test("an unreadable persisted choice is noted and skipped")
    func unreadableStore() throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("environment")
        try Data("stag ing\u{0}\n".utf8).write(to: file)
        let store = FileEnvironmentChoiceStore(fileURL: file)
        #expect(throws: EnvironmentError.self) { try store.load() }
        let set = try F.set(channel: .debug, store: store)
        #expect(set.current.id == "development")
        #expect(set.decision.notes.count == 1)
        #expect(set.decision.notes.first?.hasPrefix("persisted choice unreadable") == true)
    }

    @Test("a locked App Store build ignores the override and the persisted choice and lists why")
    func lockedBuildDecidesAlone() throws {
        let set = try F.set(
            channel: .appStore,
            override: EnvironmentOverride(environmentID: "staging", origin: .launchArgument),
            store: InMemoryEnvironmentChoiceStore("development"))
        #expect(set.current.id == "production")
        #expect(set.decision.source == .build)
        #expect(
            set.decision.notes == [
                "launch argument -COURIER_ENV staging ignored: switching is forbidden in this build (App Store build)",
                "persisted choice 'development' ignored: switching is forbidden in this build (App Store build)",
            ])
        #expect(!set.isSwitchingAllowed)
    }

    @Test("a build whose channel could not be read is locked like an App Store build")
    func unknownChannelIsLocked() throws {
        // An App Store install over a TestFlight one keeps its persisted choice; StoreKit did not
        // answer at this launch.
        let set = try F.set(channel: .unknown, store: InMemoryEnvironmentChoiceStore("staging"))
        #expect(set.current.id == "production")
        #expect(!set.isSwitchingAllowed)
        #expect(set.decision.notes.count == 1)
    }

    @Test("the same sources in an unlocked set are honoured")
    func unlockedAppStoreBuild() throws {
        let set = try F.set(
            channel: .appStore, override: EnvironmentOverride(environmentID: "staging", origin: .launchArgument),
            switching: .allowed)
        #expect(set.current.id == "staging")
    }

    @Test("the process detector: DEBUG first, then the launch argument, then the variable")
    func processDetector() async {
        let debug = ProcessBuildChannelDetector(
            isDebugBuild: true, arguments: [], environment: ["COURIER_BUILD_CHANNEL": "appstore"])
        #expect(await debug.detectChannel().channel == .debug)
        let argument = ProcessBuildChannelDetector(
            isDebugBuild: false, arguments: ["/app", "-COURIER_BUILD_CHANNEL", "TestFlight"],
            environment: ["COURIER_BUILD_CHANNEL": "appstore"])
        #expect(
            await argument.detectChannel()
                == BuildChannelReading(.testFlight, evidence: "launch argument -COURIER_BUILD_CHANNEL TestFlight"))
        let variable = ProcessBuildChannelDetector(
            isDebugBuild: false, arguments: [], environment: ["COURIER_BUILD_CHANNEL": "appstore"])
        #expect(await variable.detectChannel().channel == .appStore)
        let bogus = ProcessBuildChannelDetector(
            isDebugBuild: false, arguments: [], environment: ["COURIER_BUILD_CHANNEL": "beta"])
        #expect(await bogus.detectChannel().channel == .unknown)
        let none = ProcessBuildChannelDetector(isDebugBuild: false, arguments: [], environment: [:])
        #expect(
            await none.detectChannel() == BuildChannelReading(.unknown, evidence: "release build; COURIER_BUILD_CHANNEL not set"))
    }

    @Test("detect(...) wires the detector's reading into the decision")
    func detectEntryPoint() async throws {
        let set = try await EnvironmentSet.detect(
            environments: F.standard(),
            detector: ProcessBuildChannelDetector(
                isDebugBuild: false, arguments: [], environment: ["COURIER_BUILD_CHANNEL": "xcode"]),
            store: InMemoryEnvironmentChoiceStore(), override: nil)
        #expect(set.current.id == "staging")
        #expect(
            set.decision.description
                == "staging — chosen by the build; build: release build run from Xcode (environment variable COURIER_BUILD_CHANNEL = xcode)"
        )
    }

    @Test("declarations are validated: identifiers, duplicates, mapping, base URLs")
    func validation() throws {
        #expect(throws: EnvironmentError.invalidIdentifier("my env")) { try F.environment("my env", host: "x") }
        #expect(throws: EnvironmentError.invalidIdentifier("..")) {
            try APIEnvironment("ok", baseURL: URL(string: "https://x.test")!, storageNamespace: "..")
        }
        #expect(throws: EnvironmentError.invalidBaseURL(environment: "ftp", api: "default", url: "ftp://x.test")) {
            try APIEnvironment("ftp", baseURL: URL(string: "ftp://x.test")!)
        }
        #expect(throws: EnvironmentError.duplicateIdentifier("staging")) {
            try EnvironmentSet(
                environments: [F.environment("staging"), F.environment("staging")], build: F.reading(.debug),
                mapping: BuildMapping(
                    debug: "staging", xcode: "staging", testFlight: "staging", appStore: "staging", unknown: "staging"),
                store: InMemoryEnvironmentChoiceStore(), override: nil)
        }
        #expect(throws: EnvironmentError.unknownEnvironment("development", known: ["staging", "production"])) {
            try EnvironmentSet(
                environments: [F.environment("staging"), F.environment("production")], build: F.reading(.appStore),
                store: InMemoryEnvironmentChoiceStore(), override: nil)
        }
        #expect(throws: EnvironmentError.noEnvironments) {
            try EnvironmentSet(environments: [], build: F.reading(.debug), store: InMemoryEnvironmentChoiceStore(), override: nil)
        }
        #expect(throws: EnvironmentError.missingBaseURL(environment: "staging", api: "media")) {
            try F.environment("staging").api("media")
        }
    }

    /// A set of two environments (no `production`) built with the default mapping: the error says
    /// where the name came from and what to pass, not only that it is unknown.
    @Test func aSetMissingAnEnvironmentOfTheDefaultMappingSaysToPassAMapping() {
        let error = #expect(throws: EnvironmentError.unknownEnvironment("production", known: ["development", "staging"])) {
            try EnvironmentSet(
                environments: [F.environment("development"), F.environment("staging")], build: F.reading(.debug),
                store: InMemoryEnvironmentChoiceStore(), override: nil)
        }
        #expect(error?.localizedDescription.contains("BuildMapping") == true)
        #expect(error?.localizedDescription.contains("`mapping:`") == true)
    }
}
