// swift-tools-version:6.0
// Minimum: Swift 6.0 (see README). Settings a 6.0 compiler does not know are behind `#if compiler(>=…)`.
import PackageDescription

var strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    // SE-0335: every existential is spelled `any P`.
    .enableUpcomingFeature("ExistentialAny"),
]
#if compiler(>=6.1)
// SE-0444 (upcoming feature since Swift 6.1): a member is visible only where its module is imported.
strict.append(.enableUpcomingFeature("MemberImportVisibility"))
#endif

let package = Package(
    name: "Courier",
    platforms: [.iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierTransfers", targets: ["CourierTransfers"]),
        .library(name: "CourierEnvironments", targets: ["CourierEnvironments"]),
        .library(name: "CourierSignIn", targets: ["CourierSignIn"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .library(name: "CourierGraphQL", targets: ["CourierGraphQL"]),
        .library(name: "CourierRealtime", targets: ["CourierRealtime"]),
        .library(name: "CourierOffline", targets: ["CourierOffline"]),
        .library(name: "CourierCurl", targets: ["CourierCurl"]),
    ],
    targets: [
        // The privacy manifest (required-reason APIs: UserDefaults, file timestamps) ships with the library.
        .target(name: "Courier", resources: [.copy("PrivacyInfo.xcprivacy")], swiftSettings: strict),
        // Downloads, uploads, multipart forms, resumable (tus) uploads, background transfers and
        // Server-Sent Events: opt-in, on the core's request path (Foundation only).
        .target(name: "CourierTransfers", dependencies: ["Courier"], swiftSettings: strict),
        // Environment sets: the build channel, a persisted choice, overrides and per-environment
        // isolation of tokens and state: opt-in (Foundation; StoreKit on Apple platforms).
        .target(name: "CourierEnvironments", dependencies: ["Courier"], swiftSettings: strict),
        // Sign-in with the authorization code flow and PKCE: opt-in (Foundation; AuthenticationServices
        // on Apple platforms).
        .target(name: "CourierSignIn", dependencies: ["Courier"], swiftSettings: strict),
        .target(name: "CourierTesting", dependencies: ["Courier"], swiftSettings: strict),
        .target(name: "CourierGraphQL", dependencies: ["Courier"], swiftSettings: strict),
        // libcurl for opt-in modules (headers: libcurl4-openssl-dev, installed by scripts/setup).
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // The system zlib for CourierRealtime's permessage-deflate and CourierCurl's streamed gzip and
        // deflate bodies (Apple SDKs ship it; Debian: zlib1g-dev, installed by scripts/setup when
        // missing). Never a dependency of `Courier`.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "CourierRealtime",
            dependencies: ["Courier", "CZlib", .target(name: "CCurl", condition: .when(platforms: [.linux]))],
            swiftSettings: strict),
        // An HTTP transport on libcurl (Linux; macOS links the SDK's libcurl through the same map).
        // Streamed bodies in gzip or deflate are decoded on demand with the system zlib (CZlib).
        .target(name: "CourierCurl", dependencies: ["Courier", "CCurl", "CZlib"], swiftSettings: strict),
        // The system SQLite: Apple platforms import the SDK's `SQLite3` module; elsewhere this
        // module map links libsqlite3 (Debian: libsqlite3-dev, installed by scripts/setup).
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .target(
            name: "CourierOffline",
            dependencies: [
                "Courier", .target(name: "CSQLite", condition: .when(platforms: [.linux, .android, .windows, .openbsd])),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "courier-demo",
            dependencies: [
                "Courier", "CourierTransfers", "CourierEnvironments", "CourierGraphQL", "CourierRealtime",
                "CourierOffline", .target(name: "CourierCurl", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "courier-bench",
            dependencies: [
                "Courier", "CourierTransfers", "CourierOffline", "CourierRealtime",
                .target(name: "CourierCurl", condition: .when(platforms: [.linux])),
                .target(name: "CCurl", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: strict),
        // Test helper (not a product): enqueues and flushes mutations so the crash-safety test
        // can SIGKILL it at chosen moments and restart it.
        .executableTarget(
            name: "courier-offline-crash-helper", dependencies: ["Courier", "CourierOffline"],
            path: "Tests/CrashHelper", swiftSettings: strict),
        // Test helper (not a product): runs the library's workloads in a process whose concurrency
        // pool is one thread wide and measures how late probe tasks are scheduled
        // (Tests/CourierPoolStarvationTests launches it).
        .executableTarget(
            name: "courier-pool-probe",
            dependencies: [
                "Courier", "CourierTransfers", "CourierOffline", "CourierRealtime",
                .target(name: "CourierCurl", condition: .when(platforms: [.linux])),
            ],
            path: "Tests/PoolProbe", swiftSettings: strict),
        .testTarget(name: "CourierTests", dependencies: ["Courier", "CourierTesting"], swiftSettings: strict),
        .testTarget(
            name: "CourierSignInTests", dependencies: ["Courier", "CourierTesting", "CourierSignIn"],
            swiftSettings: strict),
        .testTarget(
            name: "CourierEnvironmentsTests", dependencies: ["Courier", "CourierTesting", "CourierEnvironments"],
            swiftSettings: strict),
        .testTarget(
            name: "CourierTransfersTests", dependencies: ["Courier", "CourierTesting", "CourierTransfers"],
            swiftSettings: strict),
        .testTarget(
            name: "CourierIntegrationTests",
            dependencies: [
                "Courier", "CourierTesting", "CourierTransfers", "CourierEnvironments", "CourierSignIn",
                "CourierGraphQL", .target(name: "CourierCurl", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "CourierRealtimeTests", dependencies: ["Courier", "CourierTesting", "CourierRealtime"], swiftSettings: strict),
        .testTarget(
            name: "CourierOfflineTests",
            dependencies: [
                "Courier", "CourierTesting", "CourierOffline",
                .target(name: "CourierCurl", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "CourierCurlTests", dependencies: ["Courier", "CourierTesting", "CourierCurl"], swiftSettings: strict),
        .testTarget(name: "CourierPoolStarvationTests", dependencies: ["Courier", "CourierTesting"], swiftSettings: strict),
        .testTarget(
            name: "CourierGraphQLTests", dependencies: ["Courier", "CourierTesting", "CourierGraphQL"], swiftSettings: strict),
        // Every Swift sample of README.md, the DocC articles and the doc comments, one file per block in
        // Generated/ (written by scripts/samples, which CI runs to check that the copy is current), with
        // the placeholders they share in Scaffolding.swift. Compiled, never run. No package access: a
        // sample may use only what an app can use.
        .testTarget(
            name: "CourierSamplesTests",
            dependencies: [
                "Courier", "CourierTesting", "CourierTransfers", "CourierEnvironments", "CourierSignIn",
                "CourierGraphQL", "CourierRealtime", "CourierOffline",
                .target(name: "CourierCurl", condition: .when(platforms: [.linux])),
            ],
            packageAccess: false, swiftSettings: strict),
    ]
)
