import Foundation
import PackagePlugin

/// Compiles a target's `Web` folder into it: every file below `Web/` becomes bytes in a generated Swift file
/// (`EmbeddedWebFiles`), so the built executable carries its browser files and a copied binary serves them. The
/// files stay plain and editable; a change to one (or a new one) regenerates the file on the next build.
@main
struct EmbedWebAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let web = target.directoryURL.appending(path: "Web")
        var inputs: [URL] = []
        if let walker = FileManager.default.enumerator(
            at: web, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        {
            for case let file as URL in walker
            where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                inputs.append(file)
            }
        }
        inputs.sort { $0.path < $1.path }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedWebFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) web files into \(target.name)",
                executable: try context.tool(named: "WebAssetEmbedder").url,
                arguments: [output.path, web.path] + inputs.map(\.path),
                inputFiles: inputs, outputFiles: [output])
        ]
    }
}
