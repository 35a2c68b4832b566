module.exports = {
  displayName: 'chain-arc',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
