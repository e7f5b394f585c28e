; Fiometer's Windows installer, NSIS 3 (the one installer tool: Debian's `nsis` package builds it on Linux in CI,
; NSIS for Windows (winget install NSIS.NSIS) builds it in packaging\build.ps1).
;   makensis -DVERSION=0.1.0 -DDIST=<path of dist> [-DOUTDIR=<folder>] packaging/windows/fiometer.nsi
;   -> <outdir, else dist>/fiometer-<version>-setup.exe ; silent: setup.exe /S [/D=C:\Other\Folder], uninstall: Uninstall.exe /S
; packaging/wine/setup.sh package builds it, installs it silently into a fresh Wine prefix, uses it and removes it.
; Per machine: C:\Program Files\Fiometer (only administrators may change its DLLs, which matters because
; raw-disk tests run Fiometer elevated) and Start menu entries for all users. fio is NOT bundled (GPLv2, a
; separate program): the Start menu's "Install fio" gets it (winget, else fio's MSI from its releases page).
; Uninstalling removes the program folder and its entries and keeps the user's settings, results database and
; log (%APPDATA%\Fiometer, %LOCALAPPDATA%\Fiometer).
Unicode true
Target amd64-unicode  ; a 64-bit installer: Fiometer is x64 only
!include "MUI2.nsh"
!include "LogicLib.nsh"
!include "WinVer.nsh"
!include "x64.nsh"

!ifndef VERSION
  !define VERSION "0.1.0"
!endif
!ifndef DIST  ; the folder that holds PyInstaller's one-folder build (fiometer)
  !define DIST "..\..\dist"
!endif
!ifndef OUTDIR  ; where setup.exe goes
  !define OUTDIR "${DIST}"
!endif
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Fiometer"
!define GROUP "$SMPROGRAMS\Fiometer"

Name "Fiometer ${VERSION}"
OutFile "${OUTDIR}\fiometer-${VERSION}-setup.exe"
InstallDir "$PROGRAMFILES64\Fiometer"
InstallDirRegKey HKLM "${UNINSTALL_KEY}" "InstallLocation"
RequestExecutionLevel admin
SetCompressor /SOLID lzma
BrandingText "Fiometer ${VERSION}"
VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "Fiometer"
VIAddVersionKey "FileDescription" "Fiometer ${VERSION} setup"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "LegalCopyright" "Fiometer developers, MIT licence"

!define MUI_ICON "..\..\resources\icons\fiometer.ico"
!define MUI_UNICON "..\..\resources\icons\fiometer.ico"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\fiometer.exe"
!define MUI_FINISHPAGE_RUN_TEXT "Start Fiometer"
; the finish page's second box installs fio; ticked only when fio is not found (FioFound)
!define MUI_FINISHPAGE_SHOWREADME ""
!define MUI_FINISHPAGE_SHOWREADME_TEXT "Install fio now (winget install fio.fio, or fio's installer)"
!define MUI_FINISHPAGE_SHOWREADME_FUNCTION InstallFioNow
!define MUI_PAGE_CUSTOMFUNCTION_SHOW FinishShow

!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_COMPONENTS
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

Function .onInit
  SetShellVarContext all  ; Start menu and desktop entries for all users: the install is per machine
  ${IfNot} ${RunningX64}
    MessageBox MB_OK|MB_ICONSTOP "Fiometer needs 64-bit (x64) Windows." /SD IDOK
    Abort
  ${EndIf}
  ${IfNot} ${AtLeastWin10}
    MessageBox MB_OK|MB_ICONSTOP "Fiometer needs Windows 10, Windows Server 2016 or later." /SD IDOK
    Abort
  ${EndIf}
  SetRegView 64
FunctionEnd

Function un.onInit
  SetShellVarContext all
  SetRegView 64
FunctionEnd

; fio's MSI installs C:\Program Files\fio\fio.exe and puts that folder on the system PATH
Function FioFound
  Push 0
  ${If} ${FileExists} "$PROGRAMFILES64\fio\fio.exe"
  ${OrIf} ${FileExists} "$PROGRAMFILES32\fio\fio.exe"
    Pop $0
    Push 1
  ${Else}
    SearchPath $1 "fio.exe"
    ${If} $1 != ""
      Pop $0
      Push 1
    ${EndIf}
  ${EndIf}
FunctionEnd

Function FinishShow
  Call FioFound
  Pop $0
  ${If} $0 == 0
    SendMessage $mui.FinishPage.ShowReadme ${BM_SETCHECK} ${BST_CHECKED} 0
  ${Else}
    SendMessage $mui.FinishPage.ShowReadme ${BM_SETCHECK} ${BST_UNCHECKED} 0
  ${EndIf}
FunctionEnd

Function InstallFioNow
  ExecShell "open" "$INSTDIR\install-fio.cmd"
FunctionEnd

Section "Fiometer" SecMain
  SectionIn RO
  SetOutPath "$INSTDIR"
  File /r "${DIST}\fiometer\*.*"
  File "/oname=README-fio.txt" "after-install.txt"
  File "install-fio.cmd"
  WriteUninstaller "$INSTDIR\Uninstall.exe"
  CreateDirectory "${GROUP}"
  SetOutPath "$DOCUMENTS"  ; the shortcuts' working folder
  CreateShortcut "${GROUP}\Fiometer.lnk" "$INSTDIR\fiometer.exe" "" "$INSTDIR\fiometer.exe" 0
  ; a console where `fiometer-cli` works, starting with `fiometer-cli doctor` (is fio found?)
  CreateShortcut "${GROUP}\Fiometer Command Prompt.lnk" "$SYSDIR\cmd.exe" \
    '/k "set "PATH=$INSTDIR;%PATH%" && fiometer-cli doctor"' "$INSTDIR\fiometer-cli.exe" 0
  CreateShortcut "${GROUP}\Install fio.lnk" "$SYSDIR\cmd.exe" '/c "$INSTDIR\install-fio.cmd"' \
    "$SYSDIR\shell32.dll" 0
  CreateShortcut "${GROUP}\Uninstall Fiometer.lnk" "$INSTDIR\Uninstall.exe"
  SetOutPath "$INSTDIR"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayName" "Fiometer ${VERSION}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "Publisher" "Fiometer developers"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\fiometer.exe"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\Uninstall.exe"'
  WriteRegStr HKLM "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\Uninstall.exe" /S'
  WriteRegDWORD HKLM "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKLM "${UNINSTALL_KEY}" "NoRepair" 1
SectionEnd

Section /o "Desktop shortcut (all users)" SecDesktop
  SetOutPath "$DOCUMENTS"
  CreateShortcut "$DESKTOP\Fiometer.lnk" "$INSTDIR\fiometer.exe"
  SetOutPath "$INSTDIR"
SectionEnd

Section /o "Open Iometer configuration files (.icf) with Fiometer" SecIcf
  WriteRegStr HKLM "Software\Classes\.icf\OpenWithProgids" "Fiometer.icf" ""
  WriteRegStr HKLM "Software\Classes\Fiometer.icf" "" "Iometer configuration"
  WriteRegStr HKLM "Software\Classes\Fiometer.icf\DefaultIcon" "" "$INSTDIR\fiometer.exe,0"
  WriteRegStr HKLM "Software\Classes\Fiometer.icf\shell\open\command" "" '"$INSTDIR\fiometer.exe" gui "%1"'
SectionEnd

!insertmacro MUI_FUNCTION_DESCRIPTION_BEGIN
  !insertmacro MUI_DESCRIPTION_TEXT ${SecMain} "The program and its Start menu entries."
  !insertmacro MUI_DESCRIPTION_TEXT ${SecDesktop} "A Fiometer icon on every user's desktop."
  !insertmacro MUI_DESCRIPTION_TEXT ${SecIcf} "Double-clicking an Iometer .icf file opens it in Fiometer."
!insertmacro MUI_FUNCTION_DESCRIPTION_END

Section "Uninstall"
  Delete "${GROUP}\Fiometer.lnk"
  Delete "${GROUP}\Fiometer Command Prompt.lnk"
  Delete "${GROUP}\Install fio.lnk"
  Delete "${GROUP}\Uninstall Fiometer.lnk"
  RMDir "${GROUP}"
  Delete "$DESKTOP\Fiometer.lnk"
  DeleteRegValue HKLM "Software\Classes\.icf\OpenWithProgids" "Fiometer.icf"
  DeleteRegKey /ifempty HKLM "Software\Classes\.icf\OpenWithProgids"
  DeleteRegKey /ifempty HKLM "Software\Classes\.icf"
  DeleteRegKey HKLM "Software\Classes\Fiometer.icf"
  SetOutPath "$TEMP"  ; not inside the folder being removed
  RMDir /r "$INSTDIR"  ; the program folder only: the user's data lives in %APPDATA% and %LOCALAPPDATA%
  DeleteRegKey HKLM "${UNINSTALL_KEY}"
SectionEnd
