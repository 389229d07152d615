import Foundation
import PackagePlugin

/// Writes the commit the build is made from into a target (`BuildInfo.commit`): `$ORCHARD_BUILD_COMMIT` when set
/// (a package build from a source tarball), else the checkout's `git rev-parse --short=12 HEAD` with `-dirty` when
/// tracked files differ from it, else `unknown`. Runs before every build; the file is rewritten only when its text
/// changes, so an unchanged commit recompiles nothing.
@main
struct BuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        let script = """
            set -u
            mkdir -p "$1"
            commit=${ORCHARD_BUILD_COMMIT:-}
            if [ -z "$commit" ]; then
                commit=$(git -C "$2" rev-parse --short=12 HEAD 2>/dev/null || true)
                if [ -n "$commit" ] && [ -n "$(git -C "$2" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
                    commit="$commit-dirty"
                fi
            fi
            [ -n "$commit" ] || commit=unknown
            text="// Generated before each build: the commit this build is made from.
            package enum BuildInfo {
                /// The commit (12 hex digits, \\`-dirty\\` when tracked files differed), or \\`unknown\\`.
                package static let commit = \\"$commit\\"
            }"
            file="$1/BuildInfo.swift"
            [ "$(cat "$file" 2>/dev/null)" = "$text" ] || printf '%s\\n' "$text" > "$file"
            """
        return [
            .prebuildCommand(
                displayName: "Recording the build's commit", executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "build-info", output.path, context.package.directoryURL.path],
                outputFilesDirectory: output)
        ]
    }
}
