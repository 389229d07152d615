// swift-tools-version:6.0
// The app side of an Orchard checkout as a plain Swift package: no Xcode project. `TeaShopCheckout` is the code an
// app links (both payment flows, its merchant backend's client); `checkout-sample` runs it from the command line
// against a sandbox gateway and the merchant backend sample, on the simulated sheet. See README.md.

import PackageDescription

let package = Package(
    name: "OrchardPayCheckout",
    platforms: [.iOS(.v15), .macOS(.v14)],
    dependencies: [
        // This repository; an app uses the gateway's repository URL instead.
        .package(name: "Orchard", path: "../..")
    ],
    targets: [
        .target(name: "TeaShopCheckout", dependencies: [.product(name: "OrchardPay", package: "Orchard")]),
        .executableTarget(name: "checkout-sample", dependencies: ["TeaShopCheckout"]),
    ],
    swiftLanguageModes: [.v6]
)
