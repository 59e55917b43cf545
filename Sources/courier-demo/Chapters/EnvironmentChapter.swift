import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierEnvironments

/// The first chapter: which server the app talks to and why — decided by an override
/// (`COURIER_ENV=staging scripts/demo`), else a remembered switch, else the build — then a switch
/// between the two local reference servers, with staging's session staying on staging.
func runEnvironmentChapter(_ demo: Demo) async throws {
    demo.chapter("Environments: chosen by the build, switchable, remembered")
    let development = try APIEnvironment(
        "development", displayName: "Development (local, server 1)",
        baseURL: demo.serverURL.appendingPathComponent("ns").appendingPathComponent(demo.namespace + "-dev"))
    let staging = try APIEnvironment(
        "staging", displayName: "Staging (server 1)",
        baseURL: demo.serverURL.appendingPathComponent("ns").appendingPathComponent(demo.namespace),
        headers: ["X-API-Key": "staging-demo-key"])
    let production = try APIEnvironment(
        "production", displayName: "Production (server 2)",
        baseURL: demo.secondServerURL.appendingPathComponent("ns").appendingPathComponent(demo.namespace))

    // Where a switch is remembered: a file on Linux (UserDefaults on Apple platforms).
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-\(demo.namespace)-env")
    defer { try? FileManager.default.removeItem(at: folder) }
    let choiceFile = folder.appendingPathComponent("environment")
    #if DEBUG
    let isDebugBuild = true
    #else
    let isDebugBuild = false
    #endif
    func launch() async throws -> EnvironmentSet {
        try await EnvironmentSet.detect(
            environments: [development, staging, production],
            detector: BuildChannelDetection.platformDefault(isDebugBuild: isDebugBuild),
            switching: .forbiddenInAppStoreBuilds,
            store: FileEnvironmentChoiceStore(fileURL: choiceFile))
    }

    let environments = try await launch()
    demo.say("environment: \(environments.decision)")
    demo.say(
        "(override with COURIER_ENV=<id> or -COURIER_ENV <id>; build channel with COURIER_BUILD_CHANNEL=testflight|appstore in a release build)"
    )

    // One client per API, built for the set; each environment gets its own transport and tokens.
    let tokens = EnvironmentScoped { environment in
        TokenManager(
            store: FileTokenStore(directory: folder, namespace: environment.storageNamespace),
            // No transport of its own: it refreshes through its client's (that environment's).
            grant: .oauth2(tokenURL: environment.baseURLs[APIEnvironment.defaultAPI]!.appendingPathComponent("auth/refresh")))
    }
    let client = try APIClient(environments: environments) { configuration, environment in
        configuration.interceptors = .standard(tokenManager: tokens[environment])
        DemoObservability.shared.install(into: &configuration)
    }

    guard environments.isSwitchingAllowed else {
        demo.say("switching is forbidden in this build (\(environments.build.channel)); staying on \(environments.current.id)")
        return
    }

    // A debug menu lists the environments and switches; sign in on staging, then switch to production.
    demo.say(
        "debug menu: "
            + environments.environments.map { $0.id == environments.current.id ? "[\($0.displayName)]" : $0.displayName }.joined(
                separator: " · "))
    try await environments.switchEnvironment(to: "staging")
    try await demo.signIn(through: client, into: tokens[staging])
    try await client.send(Request<Void>.get("/cookies/set", query: ["session": "staging-only"]))
    let onStaging = try await client.send(Request<DemoEcho>.get("/echo").policy(.authorizedRead))
    demo.say(
        "on \(environments.current.displayName): GET /echo reached \(onStaging.headers["Host"] ?? "?") — Authorization \(onStaging.headers["Authorization"] == nil ? "absent" : "Bearer …"), cookie \(onStaging.headers["Cookie"] ?? "none"), X-API-Key \(onStaging.headers["X-API-Key"] == nil ? "absent" : "sent")"
    )

    try await environments.switchEnvironment(to: "production")
    let onProduction = try await client.send(Request<DemoEcho>.get("/echo"))
    demo.say(
        "switched to \(environments.current.displayName): GET /echo reached \(onProduction.headers["Host"] ?? "?") — Authorization \(onProduction.headers["Authorization"] == nil ? "absent" : "SENT"), cookie \(onProduction.headers["Cookie"] ?? "absent"), X-API-Key \(onProduction.headers["X-API-Key"] == nil ? "absent" : "SENT")"
    )
    do {
        _ = try await client.send(Request<DemoEcho>.get("/me").policy(.authorizedRead))
    } catch let error as NetworkError {
        demo.say(
            "a signed-in screen on production → \"\(error.userMessage)\" (staging's session stays on staging; nothing was sent)")
    }

    // The next launch finds the choice; resetting forgets it.
    let nextLaunch = try await launch()
    demo.say("next launch: \(nextLaunch.decision)")
    try await nextLaunch.resetChoice()
    demo.say("after \"reset\" in the debug menu: \(nextLaunch.decision)")
}

/// What `/echo` reports (only the fields the chapter prints).
struct DemoEcho: Decodable, Sendable {
    var headers: [String: String]
}
