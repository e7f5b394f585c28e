; Inno Setup 6 script: installs the one-folder build (dist\fiometer) that packaging\build.ps1 makes.
;   "%ProgramFiles(x86)%\Inno Setup 6\ISCC.exe" packaging\windows\fiometer.iss
;   -> dist\fiometer-<version>-setup.exe   (build.ps1 runs this and passes /DAppVersion=...)
; Installs per machine into C:\Program Files\Fiometer (admins only may change its DLLs, which matters
; because raw-disk tests run Fiometer elevated). fio is NOT bundled: the last page says how to get it,
; offers `winget install fio.fio`, and the Start menu gets a link to fio's downloads.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif

[Setup]
; AppId identifies the product for upgrades and uninstall: never change it.
AppId={{3EAABC7C-9377-4360-8563-B05CF387DB70}
AppName=Fiometer
AppVersion={#AppVersion}
AppVerName=Fiometer {#AppVersion}
AppPublisher=Fiometer developers
AppComments=Iometer-compatible storage benchmark built on fio
DefaultDirName={autopf}\Fiometer
DefaultGroupName=Fiometer
DisableProgramGroupPage=yes
PrivilegesRequired=admin
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir=..\..\dist
OutputBaseFilename=fiometer-{#AppVersion}-setup
SetupIconFile=..\..\resources\icons\fiometer.ico
UninstallDisplayIcon={app}\fiometer.exe
UninstallDisplayName=Fiometer {#AppVersion}
InfoAfterFile=after-install.txt
ChangesAssociations=yes
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "icf"; Description: "Open Iometer configuration files (.icf) with Fiometer"; GroupDescription: "File types:"; Flags: unchecked

[Files]
Source: "..\..\dist\fiometer\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs
Source: "after-install.txt"; DestDir: "{app}"; DestName: "README-fio.txt"; Flags: ignoreversion

[INI]
Filename: "{app}\fio-downloads.url"; Section: "InternetShortcut"; Key: "URL"; String: "https://github.com/axboe/fio/releases"

[Icons]
Name: "{group}\Fiometer"; Filename: "{app}\fiometer.exe"; WorkingDir: "{userdocs}"
; a console where `fiometer-cli` works, starting with `fiometer-cli doctor` (is fio found?)
Name: "{group}\Fiometer Command Prompt"; Filename: "{cmd}"; Parameters: "/k ""set ""PATH={app};%PATH%"" && fiometer-cli doctor"""; WorkingDir: "{userdocs}"; IconFilename: "{app}\fiometer-cli.exe"
Name: "{group}\Install fio (download page)"; Filename: "{app}\fio-downloads.url"
Name: "{group}\Uninstall Fiometer"; Filename: "{uninstallexe}"
Name: "{autodesktop}\Fiometer"; Filename: "{app}\fiometer.exe"; WorkingDir: "{userdocs}"; Tasks: desktopicon

[Registry]
Root: HKA; Subkey: "Software\Classes\.icf\OpenWithProgids"; ValueType: string; ValueName: "Fiometer.icf"; ValueData: ""; Flags: uninsdeletevalue; Tasks: icf
Root: HKA; Subkey: "Software\Classes\Fiometer.icf"; ValueType: string; ValueName: ""; ValueData: "Iometer configuration"; Flags: uninsdeletekey; Tasks: icf
Root: HKA; Subkey: "Software\Classes\Fiometer.icf\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\fiometer.exe,0"; Tasks: icf
Root: HKA; Subkey: "Software\Classes\Fiometer.icf\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\fiometer.exe"" gui ""%1"""; Tasks: icf

[Run]
Filename: "{cmd}"; Parameters: "/k winget install fio.fio"; Description: "Install fio now (winget install fio.fio)"; Flags: postinstall skipifsilent unchecked; Check: not FioInstalled
Filename: "{app}\fiometer.exe"; Description: "{cm:LaunchProgram,Fiometer}"; Flags: postinstall nowait skipifsilent

[UninstallDelete]
Type: files; Name: "{app}\fio-downloads.url"

[Code]
{ fio's MSI installs C:\Program Files\fio\fio.exe and appends that folder to the system PATH. }
function FioInstalled: Boolean;
begin
  Result := FileExists(ExpandConstant('{commonpf64}\fio\fio.exe'))
    or FileExists(ExpandConstant('{commonpf32}\fio\fio.exe'))
    or (FileSearch('fio.exe', GetEnv('PATH')) <> '');
end;
