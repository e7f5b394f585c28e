# Build the Windows one-folder app and its installer, then smoke-test the build.
#   powershell -ExecutionPolicy Bypass -File packaging\build.ps1 [-Python C:\Python311\python.exe] [-NoInstaller]
# -> dist\fiometer\fiometer.exe (GUI, no console), dist\fiometer\fiometer-cli.exe (console),
#    dist\fiometer-<version>-setup.exe (NSIS 3, packaging\windows\fiometer.nsi, if makensis.exe is found)
# Needs: Python 3.11 x64 (default: the `py -3.11` launcher), fio for the smoke test
# (winget install fio.fio), and NSIS 3 for the installer (winget install NSIS.NSIS). CI builds the same
# installer from the same script on Linux with Debian's makensis (bash packaging/wine/setup.sh package).
# The build runs in its own virtualenv (build\venv-win) with exactly the declared dependencies plus
# the `package` extra (PyInstaller, pinned in pyproject.toml).
param(
    [string]$Python = "",
    [switch]$NoInstaller
)
$ErrorActionPreference = "Stop"
Set-Location (Split-Path -Parent $PSScriptRoot)

function Invoke-Checked([string]$Exe, [string[]]$Arguments) {
    & $Exe @Arguments
    if ($LASTEXITCODE -ne 0) { throw "$Exe $($Arguments -join ' ') failed with exit code $LASTEXITCODE" }
}

$t0 = Get-Date
$venv = "build\venv-win"
$vpy = "$venv\Scripts\python.exe"
$want = (Get-FileHash pyproject.toml -Algorithm SHA256).Hash.Substring(0, 16)
$stamp = "$venv\.fiometer-build"
if (-not (Test-Path $vpy) -or -not (Test-Path $stamp) -or (Get-Content $stamp) -ne $want) {
    Write-Host "build: creating $venv with the package extra"
    if (Test-Path $venv) { Remove-Item -Recurse -Force $venv }
    if ($Python) { Invoke-Checked $Python @("-m", "venv", $venv) }
    else { Invoke-Checked "py" @("-3.11", "-m", "venv", $venv) }
    Invoke-Checked $vpy @("-m", "pip", "install", "-q", "--upgrade", "pip")
    Invoke-Checked $vpy @("-m", "pip", "install", "-q", "-e", ".[package]")
    Set-Content -Path $stamp -Value $want
}
$t1 = Get-Date

Invoke-Checked "$venv\Scripts\pyinstaller.exe" @("--noconfirm", "--clean", "--log-level", "WARN",
    "--distpath", "dist", "--workpath", "build\pyinstaller", "packaging\fiometer.spec")
$t2 = Get-Date

Write-Host "build: smoke test of the frozen app (console exe, then the windowed exe by its exit code)"
$env:QT_QPA_PLATFORM = "offscreen"
Invoke-Checked "dist\fiometer\fiometer-cli.exe" @("--smoke")
$gui = Start-Process -FilePath "dist\fiometer\fiometer.exe" -ArgumentList "--smoke" -Wait -PassThru -NoNewWindow
if ($gui.ExitCode -ne 0) { throw "fiometer.exe --smoke exited with $($gui.ExitCode)" }
Remove-Item Env:QT_QPA_PLATFORM
$t3 = Get-Date

$version = ((& "dist\fiometer\fiometer-cli.exe" --version) -split " ")[1]
if (-not $NoInstaller) {
    $makensis = (Get-Command makensis.exe -ErrorAction SilentlyContinue).Source
    if (-not $makensis) { $makensis = "${env:ProgramFiles(x86)}\NSIS\makensis.exe" }
    if (Test-Path $makensis) {
        $dist = (Resolve-Path dist).Path
        Invoke-Checked $makensis @("/V2", "/DVERSION=$version", "/DDIST=$dist", "packaging\windows\fiometer.nsi")
        Write-Host "build: dist\fiometer-$version-setup.exe"
    } else {
        Write-Warning "NSIS 3 not found (winget install NSIS.NSIS): no installer built"
    }
}
$size = (Get-ChildItem dist\fiometer -Recurse -File | Measure-Object -Property Length -Sum).Sum / 1MB
Write-Host ("build: dist\fiometer {0:N0} MB; venv {1:N0} s, PyInstaller {2:N0} s, smoke {3:N0} s, total {4:N0} s" -f `
    $size, ($t1 - $t0).TotalSeconds, ($t2 - $t1).TotalSeconds, ($t3 - $t2).TotalSeconds, ((Get-Date) - $t0).TotalSeconds)
