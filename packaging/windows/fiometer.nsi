; NSIS 3 script (Debian's `nsis` package builds it on Linux): installs the one-folder build dist\fiometer.
;   makensis -DVERSION=0.1.0 -DDIST=<path of dist> packaging/windows/fiometer.nsi
;   -> <dist>/fiometer-<version>-setup.exe ; silent: setup.exe /S, uninstall: Uninstall.exe /S
; packaging/wine/setup.sh package builds, installs, smoke-tests and uninstalls it under Wine. Like the Inno
; Setup script (fiometer.iss, the release path on Windows) it installs per machine into
; C:\Program Files\Fiometer, does not bundle fio, and uninstalling keeps the user's settings, results
; database and log (%APPDATA%\Fiometer, %LOCALAPPDATA%\Fiometer).
Target amd64-unicode  ; a 64-bit installer: Fiometer is x64 only (and Wine here is 64-bit only)
!ifndef VERSION
  !define VERSION "0.1.0"
!endif
!ifndef DIST
  !define DIST "..\..\dist"
!endif
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Fiometer"

Name "Fiometer ${VERSION}"
OutFile "${DIST}\fiometer-${VERSION}-setup.exe"
InstallDir "$PROGRAMFILES64\Fiometer"
RequestExecutionLevel admin
SetCompressor /SOLID lzma
Icon "..\..\app\resources\icons\fiometer.ico"

Page directory
Page instfiles
UninstPage uninstConfirm
UninstPage instfiles

Section "Fiometer"
  SetRegView 64
  SetOutPath "$INSTDIR"
  File /r "${DIST}\fiometer\*.*"
  WriteUninstaller "$INSTDIR\Uninstall.exe"
  CreateDirectory "$SMPROGRAMS\Fiometer"
  CreateShortcut "$SMPROGRAMS\Fiometer\Fiometer.lnk" "$INSTDIR\fiometer.exe"
  CreateShortcut "$SMPROGRAMS\Fiometer\Uninstall Fiometer.lnk" "$INSTDIR\Uninstall.exe"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayName" "Fiometer ${VERSION}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "Publisher" "Fiometer developers"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\fiometer.exe"
  WriteRegStr HKLM "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\Uninstall.exe"'
  WriteRegStr HKLM "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\Uninstall.exe" /S'
SectionEnd

Section "Uninstall"
  SetRegView 64
  Delete "$SMPROGRAMS\Fiometer\Fiometer.lnk"
  Delete "$SMPROGRAMS\Fiometer\Uninstall Fiometer.lnk"
  RMDir "$SMPROGRAMS\Fiometer"
  RMDir /r "$INSTDIR"  ; the program folder only: the user's data lives in %APPDATA% and %LOCALAPPDATA%
  DeleteRegKey HKLM "${UNINSTALL_KEY}"
SectionEnd
