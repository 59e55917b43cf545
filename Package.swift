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
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .library(name: "CourierGraphQL", targets: ["CourierGraphQL"]),
        .executable(name: "courier-demo", targets: ["courier-demo"]),
        .executable(name: "courier-bench", targets: ["courier-bench"]),
    ],
    targets: [
        .target(name: "Courier", swiftSettings: strict),
        .target(name: "CourierTesting", dependencies: ["Courier"], swiftSettings: strict),
        .target(name: "CourierGraphQL", dependencies: ["Courier"], swiftSettings: strict),
        .executableTarget(name: "courier-demo", dependencies: ["Courier", "CourierGraphQL"], swiftSettings: strict),
        .executableTarget(name: "courier-bench", dependencies: ["Courier"], swiftSettings: strict),
        .testTarget(name: "CourierTests", dependencies: ["Courier", "CourierTesting"], swiftSettings: strict),
        .testTarget(name: "CourierIntegrationTests", dependencies: ["Courier", "CourierTesting", "CourierGraphQL"], swiftSettings: strict),
        .testTarget(name: "CourierGraphQLTests", dependencies: ["Courier", "CourierTesting", "CourierGraphQL"], swiftSettings: strict),
    ]
)
